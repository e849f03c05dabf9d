package atribuicao

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// The service's own sweeps publish first and draw when consumed back
// (CONTRACT §4): a draw decided by the boot, the console or a suspension's
// end then has a trigger on the bus, whose stream time is its T, so the
// moment d6a picks to act cannot choose the winner.

// nsVarredura is the UUIDv5 namespace of the boot's sweep triggers.
var nsVarredura = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/varredura"))

// IDVarreduraBoot is the event id of the boot's sweep trigger for a pending
// demand after tentativas attempts: two instances, or two boots before it
// is consumed, publish it once; a demand whose attempt failed since gets a
// new one at the next boot.
func IDVarreduraBoot(demanda uuid.UUID, tentativas int32) uuid.UUID {
	return uuid.NewSHA1(nsVarredura, []byte("boot|"+demanda.String()+"|"+strconv.Itoa(int(tentativas))))
}

// What decided a d6a.varredura (its payload's acao).
const (
	AcaoVarreduraBoot    = "boot"
	AcaoVarreduraConsole = "console"
)

// publicarVarredura queues the trigger of a sweep: of the pending demand
// demanda, or else of uc's queue. With a fixed id, a trigger already queued
// is not queued again (publicada false).
func (u *unidade) publicarVarredura(ctx context.Context, id uuid.UUID, demanda, uc *uuid.UUID, acao string) (publicada bool, err error) {
	ja, err := u.naOutbox(ctx, id)
	if err != nil || ja {
		return false, err
	}
	corr := ""
	switch {
	case demanda != nil:
		corr = demanda.String()
	case uc != nil:
		corr = uc.String()
	default:
		return false, fmt.Errorf("varredura sem demanda nem unidade")
	}
	t := sorteio.FormatTimestamp(u.agora)
	err = u.publicar(evento.Varredura, id, corr, t, outbox.Varredura{DemandaID: demanda, UnidadeCivicaID: uc, Acao: acao, Timestamp: t})
	return err == nil, err
}
