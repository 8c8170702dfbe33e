package discover

import "sync"

// onceMap computes a value per key once, however many builds ask for it
// at the same time.
type onceMap[T any] struct {
	mu sync.Mutex
	m  map[string]*onceValue[T]
}

type onceValue[T any] struct {
	once sync.Once
	v    T
}

// get returns the value of key, computing it with fn the first time.
func (o *onceMap[T]) get(key string, fn func() T) T {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]*onceValue[T]{}
	}
	e := o.m[key]
	if e == nil {
		e = &onceValue[T]{}
		o.m[key] = e
	}
	o.mu.Unlock()
	e.once.Do(func() { e.v = fn() })
	return e.v
}
