package predict

// capped is a map that holds at most limit entries: adding one more forgets the entry added
// longest ago. It keeps per-user and per-kind memory bounded however long the predictor runs,
// and forgets in a fixed order, so that a replay gives the same answers every time.
type capped[K comparable, V any] struct {
	limit int
	m     map[K]V
	order []K // keys in the order they were added, a ring once full
	next  int
}

func newCapped[K comparable, V any](limit int) *capped[K, V] {
	return &capped[K, V]{limit: limit, m: make(map[K]V)}
}

func (c *capped[K, V]) get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

// put adds or replaces k's value.
func (c *capped[K, V]) put(k K, v V) {
	if _, ok := c.m[k]; ok {
		c.m[k] = v
		return
	}
	if len(c.order) < c.limit {
		c.order = append(c.order, k)
	} else {
		delete(c.m, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % c.limit
	}
	c.m[k] = v
}

func (c *capped[K, V]) len() int { return len(c.m) }

// delete forgets k. Its place in the order stays taken until the order comes round to it.
func (c *capped[K, V]) delete(k K) { delete(c.m, k) }
