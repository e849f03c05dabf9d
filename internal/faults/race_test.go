//go:build faults && race

package faults

// raceAtivo: the test binary runs with the race detector, so d6a is built
// with it too (D6A_FAULTS_RACE overrides).
const raceAtivo = true
