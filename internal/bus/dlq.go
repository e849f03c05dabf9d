package bus

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// Dead-letter headers (CONTRACT §3).
const (
	HeaderErro            = "D6a-Erro"
	HeaderSubjectOriginal = "D6a-Subject-Original"
	HeaderSeqOriginal     = "D6a-Seq-Original"
)

// tamanhoMaxErro caps the D6a-Erro header.
const tamanhoMaxErro = 1024

// DeadLetter copies a bus message to the dead-letter stream, subject
// d6a.dlq.<type-ascii> (the original subject's last token when tipo is not
// a known type), with the reason and the original's subject and sequence in
// headers (CONTRACT §3). The message id is derived from the original's
// stream sequence, so dead-lettering the same message twice, for example
// after a crash between this call and the ack, stores it once.
func (b *Bus) DeadLetter(ctx context.Context, tipo evento.Tipo, subjectOriginal string, seqOriginal uint64, data []byte, reason string) error {
	subject := dlqSubject(tipo, subjectOriginal)
	m := nats.NewMsg(subject)
	m.Data = bytes.Clone(data)
	m.Header.Set(HeaderErro, umaLinha(reason))
	m.Header.Set(HeaderSubjectOriginal, subjectOriginal)
	m.Header.Set(HeaderSeqOriginal, strconv.FormatUint(seqOriginal, 10))
	msgID := "dlq-" + b.cfg.Stream + "-" + strconv.FormatUint(seqOriginal, 10)
	if _, err := b.js.PublishMsg(ctx, m, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(DLQStream)); err != nil {
		return fmt.Errorf("dead-lettering %s seq %d: %w", subjectOriginal, seqOriginal, err)
	}
	if b.cfg.AoMorrer != nil {
		b.cfg.AoMorrer(tipo)
	}
	return nil
}

func dlqSubject(tipo evento.Tipo, subjectOriginal string) string {
	if _, ok := evento.ParseTipo(string(tipo)); ok {
		return tipo.DLQSubject()
	}
	ultimo := subjectOriginal[strings.LastIndexByte(subjectOriginal, '.')+1:]
	if ultimo == "" || strings.ContainsAny(ultimo, "*> \t\r\n") {
		ultimo = "desconhecido"
	}
	return evento.PrefixoDLQ + "." + ultimo
}

// umaLinha makes reason a valid one-line header value of at most 1 KiB: a
// line break would end the header block.
func umaLinha(reason string) string {
	r := strings.Map(func(c rune) rune {
		if c == '\r' || c == '\n' {
			return ' '
		}
		return c
	}, strings.TrimSpace(reason))
	if len(r) > tamanhoMaxErro {
		corte := tamanhoMaxErro
		for corte > 0 && !utf8.RuneStart(r[corte]) {
			corte--
		}
		r = r[:corte]
	}
	if r == "" {
		r = "sem motivo"
	}
	return r
}
