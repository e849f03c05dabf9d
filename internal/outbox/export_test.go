package outbox

// SemEsperarWAL lets the tests run the relay's BEGIN on their own.
var SemEsperarWAL = semEsperarWAL
