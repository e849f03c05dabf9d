package bus

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// MsgsEntre reads a run of the stream in one pass with what GetMsg gives
// for each sequence: the messages stored from de to ate, in order, a
// deleted one (at either end too) left out, none after ate, and a run that
// ends past the stream's last message ending there.
func TestMsgsEntre(t *testing.T) {
	t.Parallel()
	b := busComAgendas(t, 20)
	ctx := ctxTeste(t)
	s, err := b.streamBus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{7, 12} {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	casos := []struct {
		de, ate uint64
		want    []uint64
	}{
		{3, 9, []uint64{3, 4, 5, 6, 8, 9}},
		{7, 12, []uint64{8, 9, 10, 11}},
		{18, 500, []uint64{18, 19, 20}},
		{5, 5, []uint64{5}},
	}
	for _, c := range casos {
		var got []uint64
		err := b.MsgsEntre(ctx, c.de, c.ate, func(seq uint64, data []byte, subject string, em time.Time) error {
			got = append(got, seq)
			d, subj, t0, err := b.MsgPorSequencia(ctx, seq)
			if err != nil {
				return err
			}
			if !bytes.Equal(d, data) || subj != subject || !t0.Equal(em) {
				t.Errorf("seq %d: MsgsEntre gives %s %q %v, GetMsg %s %q %v", seq, data, subject, em, d, subj, t0)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("MsgsEntre(%d, %d): %v", c.de, c.ate, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("MsgsEntre(%d, %d) = %v, want %v", c.de, c.ate, got, c.want)
		}
	}
}
