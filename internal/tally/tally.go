// Package tally counts repeated records in bounded memory: a record seen
// again adds to the count of the first, and past a limit of distinct
// records new ones are only counted, under a key the caller chooses for
// the overflow (a handful, such as one per kind).
//
// It exists for reports fed by a sandboxed process, which may repeat one
// refused call millions of times or vary its path each time: the memory
// a report holds must not be the command's to choose.
package tally

// Log is a bounded set of records of type V keyed by K, in the order first
// seen, each with a count. The zero value is not usable: see New.
type Log[K comparable, V any] struct {
	max   int
	index map[K]int
	items []Item[V]
}

// Item is one record and how many times it was added.
type Item[V any] struct {
	Value V
	Count int
}

// New returns a log keeping at most max distinct records, plus those added
// with Overflow.
func New[K comparable, V any](max int) *Log[K, V] {
	return &Log[K, V]{max: max, index: make(map[K]int)}
}

// Add counts v under k n times. It reports whether the record is new: a
// new record past the limit is not kept, and Add returns false with
// kept false too.
func (l *Log[K, V]) Add(k K, v V, n int) (isNew, kept bool) {
	if i, ok := l.index[k]; ok {
		l.items[i].Count += n
		return false, true
	}
	if len(l.index) >= l.max {
		return true, false
	}
	l.put(k, v, n)
	return true, true
}

// Overflow counts v under k even past the limit: for the few keys that
// stand for what Add could not keep.
func (l *Log[K, V]) Overflow(k K, v V, n int) {
	if i, ok := l.index[k]; ok {
		l.items[i].Count += n
		return
	}
	l.put(k, v, n)
}

func (l *Log[K, V]) put(k K, v V, n int) {
	l.index[k] = len(l.items)
	l.items = append(l.items, Item[V]{Value: v, Count: n})
}

// Items returns the records in the order first seen; the slice is the
// log's own until the next Add.
func (l *Log[K, V]) Items() []Item[V] { return l.items }

// Len is the number of records kept.
func (l *Log[K, V]) Len() int { return len(l.items) }
