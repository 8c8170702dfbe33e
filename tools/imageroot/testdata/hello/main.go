// Command hello is a static program TestAssemble builds to stand for kiln and busybox.
package main

func main() { println("hello") }
