// Command etcd is etcd's own server main, built at the version that
// k8s.io/kubernetes pins, for kiln's conformance test.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
