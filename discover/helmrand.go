package discover

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"text/template"
)

// seededFuncs are the template functions of Helm (sprig's) that draw random
// values, drawing instead from a stream seeded by the chart and release they
// render: Helm runs a chart's templates one at a time in a fixed order, so a
// chart renders to the same bytes on every run (the reports, the content
// cache's keys and kiln diff depend on it), and two releases of one chart
// still get different values, as they would from Helm. What the values are
// never matters to a judgement: a name generated with randAlphaNum is a
// name of the same length and alphabet. The functions that make keys and
// certificates (genCA, genPrivateKey, ...) stay Helm's own.
func seededFuncs(seed ...string) template.FuncMap {
	sum := sha256.Sum256([]byte(strings.Join(seed, "\x00")))
	src := &lockedRand{r: rand.New(rand.NewChaCha8(sum))}
	pick := func(alphabet string) func(int) string {
		return func(n int) string {
			if n <= 0 {
				return ""
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[src.intN(len(alphabet))]
			}
			return string(b)
		}
	}
	const (
		lower   = "abcdefghijklmnopqrstuvwxyz"
		upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		digits  = "0123456789"
		letters = lower + upper
	)
	var ascii strings.Builder
	for c := byte(32); c <= 126; c++ {
		ascii.WriteByte(c)
	}
	return template.FuncMap{
		"randAlphaNum": pick(letters + digits),
		"randAlpha":    pick(letters),
		"randNumeric":  pick(digits),
		"randAscii":    pick(ascii.String()),
		"randBytes": func(n int) (string, error) {
			if n < 0 {
				return "", fmt.Errorf("randBytes: negative count %d", n)
			}
			return base64.StdEncoding.EncodeToString(src.bytes(n)), nil
		},
		"randInt": func(min, max int) int {
			if max <= min {
				// sprig calls rand.Intn(max-min), which panics here; Helm
				// reports the panic as the template's error.
				panic(fmt.Sprintf("randInt: max %d is not above min %d", max, min))
			}
			return min + src.intN(max-min)
		},
		"uuidv4": func() string {
			b := src.bytes(16)
			b[6] = b[6]&0x0f | 0x40 // version 4
			b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
		},
		"shuffle": func(s string) string {
			r := []rune(s)
			src.shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
			return string(r)
		},
	}
}

// lockedRand is one seeded stream, safe to draw from concurrently (Helm
// renders one chart's templates on one goroutine; a lock costs nothing).
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) intN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) bytes(n int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(l.r.Uint32())
	}
	return b
}

func (l *lockedRand) shuffle(n int, swap func(i, j int)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.Shuffle(n, swap)
}
