// Package sorteio implements the public, verifiable draw (sorteio) that
// assigns a citizen demand to one of the eligible counsellors (conselheiros).
//
// Everything here is a pure function of public data: the base (the id of the
// last event seen on the bus, or a fresh UUID on fallback), the draw time T
// and the list of eligible counsellor ids. Anyone holding those three values
// must be able to re-run the draw and obtain the same seed, order, list hash
// and winner, bit for bit (CONTRACT §4). The package does no I/O beyond the
// reader and writer handed to [VerificarJSON], so it can be embedded in the
// service, in the d6a verify command and in third-party tooling alike.
//
// The algorithm, step by step (CONTRACT §4):
//
//  1. T is the draw time in UTC formatted as YYYY-MM-DDTHH:MM:SS.mmmZ
//     ([FormatTimestamp]).
//  2. seed = hex(HMAC-SHA256(key "d6a-sorteio", base + ":" + T)) ([Seed]).
//  3. The eligible ids are lowercased and sorted ascending, byte-wise.
//  4. The sorted list is shuffled with Fisher-Yates, drawing each index from
//     SHA-256(seed + ":" + step) ([RandomInt], [Shuffle]).
//  5. lista_elegiveis_hash = hex(SHA-256(compact JSON array of the shuffled
//     ids)) ([ListHash]).
//  6. The winner (selecionado) is the first id of the shuffled list
//     ([PosicaoSorteada] is always 0).
package sorteio
