package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// opcoesURL are the flags of `d6a verify --url` (CONTRACT §1, §7).
type opcoesURL struct {
	url, desde, chave, evento string
	// beaconChave pins the beacon chain (hex public key, CONTRACT §4a).
	beaconChave               string
	all, estatisticas, replay bool
	conselheiro, demanda      string
	monitorar, espelhar       string
	testemunhas               []string
	quorum                    int
	// testemunhaPrivada: a --testemunha was a signer's private key.
	testemunhaPrivada bool
}

func flagsURL(fs *flag.FlagSet) *opcoesURL {
	o := &opcoesURL{}
	fs.StringVar(&o.url, "url", "", "base URL of a d6a: verify from its public transparency log, no database")
	fs.BoolVar(&o.all, "all", false, "with --url: mirror the whole log and recompute every draw")
	fs.StringVar(&o.desde, "desde", "", "with --url: checkpoint file saved on the last visit (created if missing, replaced when consistent); with --consistencia: first stream sequence to read")
	fs.StringVar(&o.chave, "chave", "", "with --url: the log's verifier key (else the served one, trusted on first use)")
	fs.StringVar(&o.beaconChave, "beacon-chave", "", "with --url: the beacon chain's public key (hex) the log's d6a.regras_sorteio record must name; exit 1 when it names another (without it the chain is named: quicknet, built in, or private)")
	fs.StringVar(&o.evento, "evento", "", "with --url --event-id: the conselheiro.sorteado received (envelope or payload, JSON file) to compare with the record")
	fs.Func("testemunha", "with --url: a witness's cosignature verifier key (name+hash+base64, type 0x04); repeat for each witness", func(v string) error {
		// flag quotes a refused value back: a private key is kept out of
		// that message and refused by verifyURL (chavePrivada).
		if chavePrivada(v) {
			o.testemunhaPrivada = true
			return nil
		}
		if _, err := registro.VerificadorTestemunha(v); err != nil {
			return err
		}
		o.testemunhas = append(o.testemunhas, v)
		return nil
	})
	fs.BoolVar(&o.estatisticas, "estatisticas", false, "with --url: prove the whole log and recompute the fairness statistics from its records; exit 1 when they differ from what is served")
	fs.BoolVar(&o.replay, "replay", false, "with --url --all: rebuild the state from the records alone, in log order, and recompute every decision's eligible list, step and motive (CONTRACT §7)")
	fs.StringVar(&o.conselheiro, "conselheiro", "", "with --url: a counsellor's own check: their timeline as the log shows it and every decision of their coverage while available, with whether they were in the list; exit 1 naming each that left them out")
	fs.StringVar(&o.demanda, "demanda", "", "with --url: a demand's own check: its timeline as the log shows it and every release that could have served it while it waited, with what each served; exit 1 naming each that passed it over")
	fs.StringVar(&o.monitorar, "monitorar", "", "with --url: the incremental monitor; DIR keeps the last verified checkpoint and replayed state: the first run verifies and replays the whole log, each later run proves consistency with the kept checkpoint and replays only the new records (CONTRACT §7)")
	fs.StringVar(&o.espelhar, "espelhar", "", "with --url: copy the checkpoint, key and tiles into DIR as a static mirror (any web server serving DIR answers as the service), then verify the copy")
	fs.IntVar(&o.quorum, "quorum", 0, "with --url: fail unless the checkpoint carries this many valid cosignatures from the --testemunha keys")
	return o
}

// chavePrivada says whether k is a note signer key (`d6a log-keygen`'s
// first line, .data/transparencia-dev.key's): key material that must never
// be printed back.
func chavePrivada(k string) bool {
	return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(k)), "PRIVATE+KEY+")
}

// conferirChave checks --chave is a note verifier key before any request,
// and says what is wrong without echoing it ("" when right or absent):
// whatever was given by mistake may be a secret.
func conferirChave(k string) string {
	k = strings.TrimSpace(k)
	switch {
	case k == "":
		return ""
	case chavePrivada(k):
		return "this is a signer (private) key; give the verifier key (the second line `d6a log-keygen` prints, name+hash+base64, without PRIVATE+KEY+)"
	}
	if _, err := note.NewVerifier(k); err != nil {
		return fmt.Sprintf("not a note verifier key (name+hash+base64; %d characters given, not printed)", len(k))
	}
	return ""
}

// verifyURL is `d6a verify --url BASE --event-id UUID | --all | --desde FILE`.
// Exit 0 when everything holds, 1 on the first failure (named), 2 for bad
// input, an unknown draw or a server that cannot be reached.
func verifyURL(o *opcoesURL, eventID, arquivo string) int {
	stderr := os.Stderr
	if arquivo != "" {
		fmt.Fprintln(stderr, "d6a verify: --json and --url do not go together")
		return exitUsage
	}
	if err := log.ValidarURL(o.url); err != nil {
		fmt.Fprintf(stderr, "d6a verify: %v\n", err)
		return exitUsage
	}
	if o.testemunhaPrivada {
		fmt.Fprintln(stderr, "d6a verify: --testemunha: this is a signer (private) key; give the witness's cosignature verifier key (name+hash+base64, type 0x04)")
		return exitUsage
	}
	if msg := conferirChave(o.chave); msg != "" {
		fmt.Fprintf(stderr, "d6a verify: --chave: %s\n", msg)
		return exitUsage
	}
	if eventID == "" && !o.all && o.desde == "" && !o.estatisticas && o.quorum == 0 && o.conselheiro == "" && o.demanda == "" && o.monitorar == "" && o.espelhar == "" {
		fmt.Fprintln(stderr, "d6a verify: with --url give --event-id UUID, --all [--replay], --conselheiro UUID, --demanda UUID, --estatisticas, --quorum, --desde FILE, --monitorar DIR and/or --espelhar DIR")
		return exitUsage
	}
	if o.replay && !o.all {
		fmt.Fprintln(stderr, "d6a verify: --replay goes with --all")
		return exitUsage
	}
	if o.conselheiro != "" {
		if _, err := uuid.Parse(o.conselheiro); err != nil {
			fmt.Fprintf(stderr, "d6a verify: --conselheiro %q is not a UUID\n", o.conselheiro)
			return exitUsage
		}
	}
	if o.demanda != "" {
		if _, err := uuid.Parse(o.demanda); err != nil {
			fmt.Fprintf(stderr, "d6a verify: --demanda %q is not a UUID\n", o.demanda)
			return exitUsage
		}
	}
	if o.quorum < 0 || o.quorum > len(o.testemunhas) {
		fmt.Fprintf(stderr, "d6a verify: --quorum %d needs at least that many --testemunha keys (got %d)\n", o.quorum, len(o.testemunhas))
		return exitUsage
	}
	if len(o.testemunhas) > 0 && o.quorum == 0 {
		o.quorum = len(o.testemunhas)
	}
	if o.evento != "" && eventID == "" {
		fmt.Fprintln(stderr, "d6a verify: --evento needs --event-id")
		return exitUsage
	}
	var id uuid.UUID
	if eventID != "" {
		var err error
		if id, err = uuid.Parse(eventID); err != nil {
			fmt.Fprintf(stderr, "d6a verify: --event-id %q is not a UUID\n", eventID)
			return exitUsage
		}
	}
	gcVerificador()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &log.Cliente{Base: o.url, Chave: strings.TrimSpace(o.chave), Avisos: stderr}
	// The platform's bus, read-only, when D6A_NATS_URL names one: each
	// draw's trigger is checked there (CONTRACT §4).
	if u := os.Getenv("D6A_NATS_URL"); u != "" && (eventID != "" || o.all || o.conselheiro != "" || o.demanda != "" || o.monitorar != "") {
		bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
		b, err := bus.Connect(bctx, bus.Config{URL: u, Stream: cmp.Or(os.Getenv("D6A_NATS_STREAM"), "EVENTOS")})
		bcancel()
		if err != nil {
			fmt.Fprintf(stderr, "d6a verify: bus unreachable (D6A_NATS_URL), triggers not checked: %v\n", err)
		} else {
			defer b.Close()
			c.Barramento = b
		}
	}
	return verificarPublico(ctx, c, o, id, os.Stdout, stderr)
}

func verificarPublico(ctx context.Context, c *log.Cliente, o *opcoesURL, id uuid.UUID, stdout, stderr io.Writer) int {
	// The witnesses first: every checkpoint verified below must be one
	// history with the cosigned one.
	var cossinado *registro.Checkpoint
	if o.quorum > 0 {
		t, err := c.VerificarTestemunhas(ctx, o.testemunhas, o.quorum, EsperaQuorum)
		if code := falhou(stderr, err); code != 0 {
			return code
		}
		fmt.Fprintf(stdout, "OK testemunhas: checkpoint tamanho=%d cossinado por %d de %d (quorum %d):", t.Checkpoint.Tamanho, len(t.Cossinaturas), t.Testemunhadas, t.Quorum)
		for _, cs := range t.Cossinaturas {
			fmt.Fprintf(stdout, " %s em %s;", cs.Testemunha, cs.Em.Format("2006-01-02T15:04:05Z"))
		}
		fmt.Fprintln(stdout)
		cossinado = &t.Checkpoint
	}
	extensao := func(cp registro.Checkpoint) int {
		if cossinado == nil {
			return 0
		}
		return falhou(stderr, c.ConferirExtensao(ctx, *cossinado, cp))
	}
	if o.espelhar != "" {
		if code := espelhar(ctx, c, o.espelhar, stdout, stderr); code != 0 {
			return code
		}
	}
	if o.monitorar != "" {
		if code := monitorar(ctx, c, o.monitorar, o.beaconChave, stdout, stderr); code != 0 {
			return code
		}
	}
	if o.desde != "" {
		antigo, novo, primeira, err := c.VerificarDesde(ctx, o.desde)
		if code := falhou(stderr, err); code != 0 {
			return code
		}
		if primeira {
			fmt.Fprintf(stdout, "OK checkpoint tamanho=%d salvo em %s (primeira visita: nada a comparar)\n", novo.Tamanho, o.desde)
		} else {
			fmt.Fprintf(stdout, "OK consistente: tamanho %d → %d, histórico não reescrito; checkpoint salvo em %s\n", antigo.Tamanho, novo.Tamanho, o.desde)
		}
	}
	if id != uuid.Nil {
		s, err := c.VerificarSorteio(ctx, id)
		if code := falhou(stderr, err); code != 0 {
			return code
		}
		if code := extensao(s.Checkpoint); code != 0 {
			return code
		}
		if o.evento != "" {
			data, err := os.ReadFile(o.evento)
			if err != nil {
				fmt.Fprintf(stderr, "d6a verify: --evento: %v\n", err)
				return exitUsage
			}
			if s.SemCandidatos != nil {
				fmt.Fprintln(stderr, "d6a verify: --evento not compared: it compares a conselheiro.sorteado")
			} else if s.Eliminado {
				fmt.Fprintln(stderr, "d6a verify: --evento not compared: the record was eliminated")
			} else if code := falhou(stderr, registro.ConferirEvento(s.Registro, data)); code != 0 {
				return code
			}
		}
		if e := s.Entrada; e != nil {
			fmt.Fprintf(stdout, "OK %s event_id=%s indice=%d checkpoint=%d\n", e.Tipo, id, s.Indice, s.Checkpoint.Tamanho)
		} else if sc := s.SemCandidatos; sc != nil {
			fmt.Fprintf(stdout, "OK sem_candidatos event_id=%s indice=%d demanda=%s motivo=%s cadastrados=%d ocupados=%d checkpoint=%d\n",
				id, s.Indice, sc.DemandaID, sc.Motivo, sc.Cadastrados, sc.Ocupados, s.Checkpoint.Tamanho)
		} else if s.Eliminado {
			fmt.Fprintf(stdout, "ELIMINADO event_id=%s indice=%d: registro apagado (spec 2.2 / N-0d); a folha continua provada no checkpoint de tamanho %d\n", id, s.Indice, s.Checkpoint.Tamanho)
		} else {
			r := s.Registro
			fmt.Fprintf(stdout, "OK event_id=%s indice=%d conselheiro=%s total=%d seed=%s checkpoint=%d\n",
				id, s.Indice, r.ConselheiroID, len(r.ElegiveisEntrada), r.Seed, s.Checkpoint.Tamanho)
			switch {
			case s.ListaEliminada:
				fmt.Fprintln(stdout, "lista: um registro d6a.lista_sorteio deste sorteio foi eliminado (spec 2.2): conferido sem a lista")
			case s.Partes > 0:
				fmt.Fprintf(stdout, "lista: %d registros d6a.lista_sorteio logo antes do sorteio, provados no checkpoint; a lista inteira recalculada\n", s.Partes)
			}
			fmt.Fprintln(stdout, linhaGatilho(s, c.Barramento != nil))
			linha, code := linhaRodada(r, o.beaconChave)
			fmt.Fprintln(stdout, linha)
			if code != 0 {
				return code
			}
		}
	}
	if (o.all && o.replay) || o.conselheiro != "" || o.demanda != "" {
		return reproduzir(ctx, c, o, stdout, stderr)
	}
	if o.all {
		progresso, fim := barra(stderr, "registros")
		res, cp, err := c.VerificarTudo(ctx, progresso)
		fim()
		if code := falhou(stderr, err); code != 0 {
			return code
		}
		if code := extensao(cp); code != 0 {
			return code
		}
		if res.Eliminados > 0 {
			fmt.Fprintf(stdout, "eliminados=%d (registros apagados; folhas provadas pela raiz)\n", res.Eliminados)
		}
		fmt.Fprintln(stdout, res.Linha())
		if code := linhaBeacon(stdout, stderr, c.Regras, o.beaconChave); code != 0 {
			return code
		}
		if c.Barramento != nil {
			fmt.Fprintf(stdout, "gatilhos: conferidos=%d (base e T de cada sorteio desde o índice %d conferidos no barramento)\n", res.Gatilhos, res.GatilhoDesde)
		} else {
			fmt.Fprintln(stdout, "gatilhos: não conferidos (sem D6A_NATS_URL: base e T de cada sorteio não comparados com o barramento)")
		}
		if res.Primeira != nil {
			fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(res.Primeira))
			return 1
		}
	}
	if o.estatisticas {
		r, res, err := c.VerificarEstatisticas(ctx, nil)
		if code := falhou(stderr, err); code != 0 {
			return code
		}
		if res.Primeira != nil {
			fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(res.Primeira))
			return 1
		}
		veredito := "compatível com um sorteio justo"
		if r.Suspeito() {
			veredito = fmt.Sprintf("SUSPEITO (p < %v)", r.Limiar)
		}
		fmt.Fprintf(stdout, "estatisticas: registros=%d sorteios=%d conselheiros=%d estatistica=%.4f gl=%d p_valor=%.6g %s; iguais às servidas\n",
			r.Registros, r.Sorteios, len(r.Conselheiros), r.Estatistica, r.GrausLiberdade, r.PValor, veredito)
	}
	return 0
}

// barra is the progress bar of a mirror of the whole log on stderr: the
// callback the client reports to, and what ends it.
func barra(stderr io.Writer, descricao string) (progresso func(feitos, total int64), fim func()) {
	var bar *progressbar.ProgressBar
	progresso = func(feitos, total int64) {
		if bar == nil {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr),
				progressbar.OptionSetDescription(descricao), progressbar.OptionShowCount(), progressbar.OptionThrottle(200e6))
		}
		_ = bar.Set64(feitos)
	}
	fim = func() {
		if bar != nil {
			_ = bar.Finish()
			fmt.Fprintln(stderr)
		}
	}
	return progresso, fim
}

// reproduzir is `verify --url --all --replay`, `--conselheiro` and
// `--demanda`: the log mirrored and proven, its records replayed in order
// (CONTRACT §7).
func reproduzir(ctx context.Context, c *log.Cliente, o *opcoesURL, stdout, stderr io.Writer) int {
	alvo := uuid.Nil
	if o.conselheiro != "" {
		alvo = uuid.MustParse(o.conselheiro)
	}
	rp := replay.Novo(alvo)
	if o.demanda != "" {
		rp.AlvoDemanda = uuid.MustParse(o.demanda)
	}
	progresso, fim := barra(stderr, "replay")
	res, err := c.ReproduzirEm(ctx, rp, progresso)
	fim()
	if code := falhou(stderr, err); code != 0 {
		return code
	}
	code := 0
	if rp.AlvoDemanda != uuid.Nil {
		fmt.Fprintf(stdout, "demanda %s: linha do tempo segundo o log\n", rp.AlvoDemanda)
		for _, a := range rp.LinhaDemanda {
			fmt.Fprintf(stdout, "  [%d] %s\n", a.Indice, limpo(a.Texto))
		}
		if len(rp.LinhaDemanda) == 0 {
			fmt.Fprintln(stdout, "  nenhuma decisão do log nomeia esta demanda")
		}
		for _, a := range rp.Passada {
			// The decision's event_id, when one served another demand:
			// what `--event-id` checks next.
			evento := ""
			if a.EventID != uuid.Nil {
				evento = " event_id=" + a.EventID.String()
			}
			fmt.Fprintf(stderr, "d6a verify: PASSADA PARA TRÁS registro %d%s: %s\n", a.Indice, evento, limpo(a.Texto))
			code = 1
		}
		if len(rp.Passada) == 0 {
			fmt.Fprintln(stdout, "nenhuma liberação a passou para trás enquanto esperava na fila")
		}
	}
	if alvo != uuid.Nil {
		fmt.Fprintf(stdout, "conselheiro %s: linha do tempo segundo o log\n", alvo)
		for _, a := range rp.Linha {
			fmt.Fprintf(stdout, "  [%d] %s\n", a.Indice, limpo(a.Texto))
		}
		for _, a := range rp.Deixado {
			fmt.Fprintf(stderr, "d6a verify: DEIXADO DE FORA registro %d: %s\n", a.Indice, limpo(a.Texto))
			code = 1
		}
		if len(rp.Deixado) == 0 {
			fmt.Fprintln(stdout, "nenhuma decisão o deixou de fora enquanto o log o mostra disponível")
		}
	}
	if o.replay {
		if c.Barramento == nil {
			fmt.Fprintln(stdout, "gatilhos: não conferidos (sem D6A_NATS_URL)")
			fmt.Fprintln(stdout, "entradas: não conferidas contra o barramento (sem D6A_NATS_URL)")
		} else if res.Barramento {
			fmt.Fprintf(stdout, "entradas: mensagens=%d registradas=%d sem_efeito=%d mortas=%d invalidas=%d adiante=%d (mensagens do barramento que mudam a elegibilidade: cada uma com seu registro, sem efeito pelos registros anteriores ou na fila de mensagens mortas)\n",
				rp.Mensagens, rp.Registradas, rp.SemEfeito, rp.Mortas, rp.Invalidas, rp.Adiante)
		}
		if n := rp.Desconhecidos(); n > 0 {
			fmt.Fprintf(stdout, "desconhecidos=%d (conselheiros em decisões sem registro de cadastro no log: as listas que os incluem são conferidas só quanto aos conhecidos)\n", n)
		}
		if res.Eliminados > 0 {
			fmt.Fprintf(stdout, "eliminados=%d (registros apagados: o replay nada prova sobre o que nomeavam)\n", res.Eliminados)
		}
		fmt.Fprintln(stdout, res.Linha())
		if len(rp.Divergencias) > 0 {
			fmt.Fprintf(stderr, "d6a verify: DIVERGÊNCIA %s\n", limpo(rp.Divergencias[0]))
			code = 1
		}
		if c := linhaBeacon(stdout, stderr, rp.Regras(), o.beaconChave); c != 0 {
			code = c
		}
	}
	if res.Primeira != nil {
		fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(res.Primeira))
		code = 1
	}
	return code
}

// linhaBeacon names the beacon chain the log's rule record states (CONTRACT
// §4a) and checks it against --beacon-chave.
func linhaBeacon(stdout, stderr io.Writer, r *registro.RegrasSorteio, pin string) int {
	if r == nil {
		fmt.Fprintln(stdout, "beacon: nenhum registro d6a.regras_sorteio: os sorteios seguem a regra anterior ao beacon")
		if pin != "" {
			fmt.Fprintln(stderr, "d6a verify: FALHA beacon: --beacon-chave dada, mas o log não nomeia cadeia alguma")
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "beacon: %s chave=%s periodo=%ds margem=%dms (registro d6a.regras_sorteio do log)\n", r.NomeCadeia(), r.ChavePublica, r.Periodo, r.MargemMs)
	if pin != "" && !strings.EqualFold(pin, r.ChavePublica) {
		fmt.Fprintf(stderr, "d6a verify: FALHA beacon: o log nomeia a cadeia de chave %s, não a de --beacon-chave\n", r.ChavePublica)
		return 1
	}
	return 0
}

// linhaRodada is one draw's beacon round as --event-id shows it: its
// signature is checked under --beacon-chave when given (the round's choice
// needs the rule record, which --all reads).
func linhaRodada(r registro.Registro, pin string) (string, int) {
	if r.Rodada == nil {
		return "beacon: sorteio anterior à regra do beacon (sem rodada)", 0
	}
	url := fmt.Sprintf("https://api.drand.sh/%s/public/%d", beacon.QuicknetHash, *r.Rodada)
	if pin == "" {
		return fmt.Sprintf("beacon: rodada %d (compromisso %s); assinatura não conferida sem --beacon-chave (--all confere sob a chave do registro d6a.regras_sorteio); em quicknet: %s", *r.Rodada, r.Compromisso, url), 0
	}
	chave, err := beacon.ChaveHex(pin)
	if err != nil {
		return "beacon: --beacon-chave: " + err.Error(), exitUsage
	}
	var v registro.Rodadas
	if err := v.Conferir(chave, uint64(*r.Rodada), r.AssinaturaRodada); err != nil {
		return "FALHA beacon: " + err.Error(), 1
	}
	return fmt.Sprintf("OK beacon: rodada %d assinada pela cadeia de --beacon-chave; randomness %s (compromisso %s)", *r.Rodada, registro.Randomness(r.AssinaturaRodada), r.Compromisso), 0
}

// linhaGatilho says how a draw's base and T were checked.
func linhaGatilho(s log.Sorteio, comBarramento bool) string {
	switch {
	case s.AntesDoGatilho:
		return "gatilho: sorteio sem rodada do beacon: a regra do gatilho em vigor está nos registros do log (--all --replay confere)"
	case s.Gatilho:
		return fmt.Sprintf("OK gatilho: base e T são os da mensagem %d do barramento", *s.Registro.BaseSequence)
	case !comBarramento:
		return "gatilho: não conferido (sem D6A_NATS_URL)"
	}
	return "gatilho: não conferido"
}

// EsperaQuorum is how long `verify --quorum` asks again for a checkpoint
// the witnesses have not cosigned yet (a witness round takes milliseconds;
// a busy log signs a new checkpoint every batch).
var EsperaQuorum = 15 * time.Second

// limpo is v as text safe for the terminal: what a server sent reaches
// the messages, escaped (registro.Limpo).
func limpo(v any) string { return registro.Limpo(fmt.Sprint(v)) }

// falhou prints err and maps it to the exit status.
func falhou(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var f *registro.Falha
	var h *log.ErrHTTP
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &f):
		fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(err))
		return 1
	case errors.As(err, &h) && h.Status == 404:
		fmt.Fprintf(stderr, "d6a verify: %s\n", limpo(err))
		return exitUsage
	case errors.As(err, &h) && h.Status == 429:
		// Rate-limited beyond what the verifier waits: unreachable for
		// now, not a failure of the log.
		fmt.Fprintf(stderr, "d6a verify: --url unreachable: %s\n", limpo(err))
		return exitUsage
	case errors.As(err, &oe), errors.As(err, &ne):
		fmt.Fprintf(stderr, "d6a verify: --url unreachable: %s\n", limpo(err))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(err))
		return 1
	}
}
