package registro

// HistoriaSintetica and RegistroSintetico are internal/historico's, set by
// historico_test.go. historico builds this package's records, so this
// package's own tests reach it through the external test package, which may
// import it.
var (
	HistoriaSintetica func(semente string, n int) []Registravel
	RegistroSintetico func(semente string, i int) Registro
)
