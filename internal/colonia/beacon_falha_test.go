package colonia_test

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/beacon/beacontest"
)

// CONTRACT §4a "Order and waiting": while the only source of rounds
// answers a wrong signature, the round of another number, or nothing, no
// draw is made with any value, nothing is lost or dead-lettered, the
// service stays ready and the lag metric grows; once the source answers
// well the draw is made, with the round the rule names.
func TestBeaconQueFalha(t *testing.T) {
	t.Parallel()
	for _, modo := range []beacontest.Modo{beacontest.AssinaturaErrada, beacontest.RodadaErrada, beacontest.Silencioso} {
		t.Run(modo.String(), func(t *testing.T) {
			t.Parallel()
			p := beacon.NovoPrivado([]byte("beacon do teste "+modo.String()), time.Now().Add(-time.Minute).Unix(), time.Second)
			hostil := beacontest.Hostil(t, p, modo)
			var bom atomic.Bool
			honesto := p.Handler()
			// The relay misbehaves for rounds until bom is set; /info is
			// always honest, so the service starts.
			relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if bom.Load() || strings.HasSuffix(r.URL.Path, "/info") {
					honesto.ServeHTTP(w, r)
					return
				}
				http.Redirect(w, r, hostil+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(relay.Close)

			c := novaColonia(t, opcoes{})
			c.cfg.BeaconURL = []string{relay.URL}
			c.cfg.BeaconChave = hex.EncodeToString(p.Cadeia().ChavePublica)
			bairro := c.novaUC()
			c.iniciar()
			a := c.novoConselheiro(bairro)
			demanda := uuid.New()
			c.publicar("agenda.item_disponível", "1.0.0", agenda(demanda, bairro))

			// Held: well past its round's time and the retries a handler
			// error gets, nothing decided, nothing dead-lettered.
			time.Sleep(4 * time.Second)
			must(t, c.ativa(demanda) == uuid.Nil, "drawn while the beacon answered %s", modo)
			c.semDLQ()
			r := c.http(http.MethodGet, "/readyz", "", nil)
			must(t, r.status == 200, "/readyz %d while the beacon misbehaves", r.status)
			m := c.http(http.MethodGet, "/metrics", "", nil)
			must(t, strings.Contains(string(m.body), "d6a_beacon_atraso_segundos ") && !strings.Contains(string(m.body), "d6a_beacon_atraso_segundos 0\n"),
				"the lag metric does not show the wait")

			bom.Store(true)
			c.eventually("the held draw made once the source answers well", func() bool { return c.ativa(demanda) == a })
			c.esperarOutboxVazio()
			c.semDLQ()
		})
	}
}
