package conformance

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serversDir is where admit/conformance/build-servers.sh puts kube-apiserver and etcd.
func serversDir() string {
	if d := os.Getenv("KILN_SERVERS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "kiln", "servers-v1.37.2")
}

// needServers returns the binaries' directory, or skips (fails under CI)
// when they have not been built.
func needServers(t *testing.T) string {
	t.Helper()
	dir := serversDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			msg := fmt.Sprintf("%s not found in %s: run `bash admit/conformance/build-servers.sh` once (about 15 minutes) to build kube-apiserver v1.37.2 and etcd from the Go module proxy", b, dir)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// apiServer is a kube-apiserver and its etcd, listening on 127.0.0.1 only.
type apiServer struct {
	url    string
	token  string
	client *http.Client
	// auditLog is the server's audit log (JSON events, level Metadata).
	auditLog string
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startServer starts etcd and kube-apiserver in a temporary directory as
// shared/apiserver-facts.md describes, and stops them when the test ends.
func startServer(t *testing.T) *apiServer {
	t.Helper()
	bin := needServers(t)
	dir := t.TempDir()
	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)

	// A CA, a serving certificate for 127.0.0.1, a service-account key pair.
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kiln-conformance-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER)
	writePEM(t, filepath.Join(dir, "server.crt"), "CERTIFICATE", srvDER)
	srvKeyDER, _ := x509.MarshalECPrivateKey(srvKey)
	writePEM(t, filepath.Join(dir, "server.key"), "EC PRIVATE KEY", srvKeyDER)
	saKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	writePEM(t, filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))
	saPub, _ := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	writePEM(t, filepath.Join(dir, "sa.pub"), "PUBLIC KEY", saPub)
	token := "kiln-conformance-token"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
	if err := os.WriteFile(filepath.Join(dir, "audit.yaml"), []byte(audit), 0o600); err != nil {
		t.Fatal(err)
	}

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	etcd := exec.Command(filepath.Join(bin, "etcd"), "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", peerPort),
		"--unsafe-no-fsync", "--log-level", "error")
	etcdLog, _ := os.Create(filepath.Join(dir, "etcd.log"))
	etcd.Stdout, etcd.Stderr = etcdLog, etcdLog
	if err := etcd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Process.Kill(); _ = etcd.Wait() })

	api := exec.Command(filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(apiPort),
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-private-key-file", filepath.Join(dir, "server.key"),
		"--client-ca-file", filepath.Join(dir, "ca.crt"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "AlwaysAllow", "--allow-privileged=true",
		"--endpoint-reconciler-type", "none",
		"--disable-admission-plugins", "ServiceAccount",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--audit-policy-file", filepath.Join(dir, "audit.yaml"), "--audit-log-path", filepath.Join(dir, "audit.log"),
		"--cert-dir", filepath.Join(dir, "certs"), "-v", "0")
	apiLog, _ := os.Create(filepath.Join(dir, "apiserver.log"))
	api.Stdout, api.Stderr = apiLog, apiLog
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Process.Kill(); _ = api.Wait() })

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	s := &apiServer{url: fmt.Sprintf("https://127.0.0.1:%d", apiPort), token: token, auditLog: filepath.Join(dir, "audit.log"),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, _, _, err := s.do("GET", "/readyz", nil)
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			logTail, _ := os.ReadFile(filepath.Join(dir, "apiserver.log"))
			t.Fatalf("kube-apiserver not ready after 90 s (%v, %d):\n%s", err, code, tail(string(logTail), 3000))
		}
		time.Sleep(300 * time.Millisecond)
	}
	// The default namespace exists once the server's bootstrap controller ran.
	for time.Now().Before(deadline) {
		if code, _, _, _ := s.do("GET", "/api/v1/namespaces/default", nil); code == 200 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// do sends a request and returns the status code, body and Warning headers.
func (s *apiServer) do(method, path string, body []byte) (int, []byte, []string, error) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var warnings []string
	for _, w := range resp.Header.Values("Warning") {
		// 299 - "text"
		if i := strings.Index(w, `"`); i >= 0 {
			w = strings.TrimSuffix(w[i+1:], `"`)
		}
		warnings = append(warnings, w)
	}
	return resp.StatusCode, b, warnings, nil
}

// status is the message of a Status body.
func status(body []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &st)
	return st.Message
}
