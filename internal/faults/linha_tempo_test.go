//go:build faults && cluster

package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/formigueiro/d6a/internal/evento"
)

// The failover timeline of docs/reliability.md (issue 38): for each leader
// change, when the server announced it, when a d6a instance's fetch noticed
// it, when the durable delivered again, and when the next result reached
// the bus. The server's advisories are read by the test's own connection;
// d6a's side comes from its logs (bus: "fetch falhou", "entregas retomadas",
// "mensagem reentregue").

// aviso is one leader-elected advisory as the test received it.
type aviso struct {
	tipo  string // "stream" or "consumer"
	lider string
	em    time.Time
}

// avisos collects the leader advisories of EVENTOS and d6a-entradas.
type avisos struct {
	mu    sync.Mutex
	todos []aviso
}

func (a *avisos) assinar(nc *nats.Conn) (func(), error) {
	var subs []*nats.Subscription
	for tipo, subj := range map[string]string{
		"stream":   "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED." + streamBus,
		"consumer": "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED." + streamBus + "." + evento.DurableEntradas,
	} {
		s, err := nc.Subscribe(subj, func(m *nats.Msg) {
			var adv struct {
				Leader string `json:"leader"`
			}
			_ = json.Unmarshal(m.Data, &adv)
			a.mu.Lock()
			a.todos = append(a.todos, aviso{tipo, adv.Leader, time.Now()})
			a.mu.Unlock()
		})
		if err != nil {
			return nil, err
		}
		subs = append(subs, s)
	}
	return func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}, nil
}

// entre returns the advisories of tipo received in [de, ate].
func (a *avisos) entre(tipo string, de, ate time.Time) []aviso {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []aviso
	for _, v := range a.todos {
		if v.tipo == tipo && !v.em.Before(de) && !v.em.After(ate) {
			out = append(out, v)
		}
	}
	return out
}

// registroBus is one line of a d6a log that the timeline reads.
type registroBus struct {
	em  time.Time
	msg string
	// parado is "entregas retomadas"'s stall, as d6a measured it.
	parado string
}

// lerRegistros reads the bus's timeline lines of every log file.
func lerRegistros(arquivos []string) []registroBus {
	var out []registroBus
	for _, a := range arquivos {
		f, err := os.Open(a)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 4<<20)
		for s.Scan() {
			l := s.Bytes()
			if !strings.Contains(string(l), `"componente":"bus"`) {
				continue
			}
			var r struct {
				Time time.Time `json:"time"`
				Msg  string    `json:"msg"`
				// A time.Duration: nanoseconds in slog's JSON.
				Parado int64 `json:"parado"`
			}
			if json.Unmarshal(l, &r) != nil {
				continue
			}
			switch r.Msg {
			case "fetch falhou", "entregas retomadas", "mensagem reentregue", "consumidor indisponível":
				parado := ""
				if r.Parado > 0 {
					parado = fmt.Sprintf("%.2fs", time.Duration(r.Parado).Seconds())
				}
				out = append(out, registroBus{r.Time, r.Msg, parado})
			}
		}
		f.Close()
	}
	return out
}

// primeiro returns the first time at or after de of a line whose msg is
// one of msgs, or the zero time.
func primeiro(rs []registroBus, de time.Time, msgs ...string) (time.Time, string) {
	var melhor registroBus
	for _, r := range rs {
		if r.em.Before(de) || !contem(msgs, r.msg) {
			continue
		}
		if melhor.em.IsZero() || r.em.Before(melhor.em) {
			melhor = r
		}
	}
	return melhor.em, melhor.parado
}

func contem(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// primeiroResultado is the storage time of the first result at or after de.
func primeiroResultado(rs []resultado, de time.Time) time.Time {
	var t time.Time
	for _, r := range rs {
		if !r.em.Before(de) && (t.IsZero() || r.em.Before(t)) {
			t = r.em
		}
	}
	return t
}

// desde formats t relative to t0 (+s.sss), or "-" when t is zero.
func desde(t0, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%+.2fs", t.Sub(t0).Seconds())
}

// linhaDoTempo prints one line per leader change of the scenario: t0 is
// the fault (a step-down's request, a kill), before anything can notice
// it; the advisory can reach the test after d6a's fetch failed.
func linhaDoTempo(cenario string, t0s []time.Time, rotulo string, av *avisos, tipoAviso string, regs []registroBus, rs []resultado) []string {
	var out []string
	for i, t0 := range t0s {
		ant := t0.Add(-time.Second)
		var adv time.Time
		for _, v := range av.entre(tipoAviso, ant, t0.Add(30*time.Second)) {
			adv = v.em
			break
		}
		// After a stream leader's kill the durable may have lost its own
		// leader too (an R3 consumer's leader need not be the stream's):
		// nothing is delivered before its election either.
		var advConsumidor time.Time
		if tipoAviso != "consumer" {
			for _, v := range av.entre("consumer", ant, t0.Add(30*time.Second)) {
				advConsumidor = v.em
				break
			}
		}
		notou, _ := primeiro(regs, t0, "fetch falhou", "consumidor indisponível")
		if !notou.IsZero() && notou.After(t0.Add(30*time.Second)) {
			notou = time.Time{}
		}
		// The next delivery: the first "entregas retomadas" after the
		// fault, which d6a logs at the first message after an interruption.
		prox, parado := primeiro(regs, t0, "entregas retomadas")
		depois := t0
		if adv.After(depois) {
			depois = adv
		}
		res := primeiroResultado(rs, depois)
		// Redeliveries in the 40 s after it (the windows of step-downs 2 s
		// apart overlap): a delivery lost in the change comes back after
		// AckWait.
		ate := t0.Add(40 * time.Second)
		redel, ultima := 0, time.Time{}
		for _, r := range regs {
			if r.msg == "mensagem reentregue" && !r.em.Before(ant) && r.em.Before(ate) {
				redel++
				ultima = r.em
			}
		}
		consumidor := ""
		if tipoAviso != "consumer" {
			// d6a's own part: from the later of the two elections (after
			// both nothing stands between the durable and d6a) to the next
			// delivery after it. d6a marks a pause at either advisory, so
			// that delivery is logged as "entregas retomadas"; the 100 ms
			// before allow for d6a reading the advisory before the test.
			eleito, apos := adv, "-"
			if advConsumidor.After(eleito) {
				eleito = advConsumidor
			}
			if !eleito.IsZero() {
				if p, _ := primeiro(regs, eleito.Add(-100*time.Millisecond), "entregas retomadas"); !p.IsZero() {
					apos = fmt.Sprintf("%.2fs", p.Sub(eleito).Seconds())
				}
			}
			consumidor = " consumer_leader_elected=" + desde(t0, advConsumidor) + " elected_to_next_delivery=" + apos
		}
		linha := fmt.Sprintf("cluster-timeline: scenario=%s change=%d t0=%s %s_leader_elected=%s%s fetch_noticed=%s next_delivery=%s (d6a_stalled=%s) first_result=%s redeliveries_40s=%d last_redelivery=%s",
			cenario, i+1, rotulo, tipoAviso, desde(t0, adv), consumidor, desde(t0, notou), desde(t0, prox), parado, desde(t0, res), redel, desde(t0, ultima))
		out = append(out, linha)
	}
	return out
}

// lerGauge reads one unlabelled gauge from an instance's /metrics. The
// page takes up to metrics.ScrapeTimeout (2 s) while the durable has no
// leader (d6a_consumer_lag asks it), which is when the gauge matters: a
// 1 s client timeout missed every sample of an 8.5 s stall.
func lerGauge(base, nome string) (float64, bool) {
	cli := &http.Client{Timeout: 5 * time.Second}
	resp, err := cli.Get(base + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 4<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), nome+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
