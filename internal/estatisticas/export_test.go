package estatisticas

// TestarEmPaginas is Testar in pages of n counsellors, so that a test with
// a dozen of them crosses pages.
var TestarEmPaginas = testar
