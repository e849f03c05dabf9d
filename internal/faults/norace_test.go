//go:build faults && !race

package faults

// raceAtivo: the test binary runs without the race detector, so d6a is built
// without it too (D6A_FAULTS_RACE overrides).
const raceAtivo = false
