package log

// ComAnelDeRaizes shrinks c's ring of recent roots to n, so a test reaches
// the tile read behind it.
func ComAnelDeRaizes(c *Cliente, n int) *Cliente {
	c.raizesNoAnel = n
	return c
}
