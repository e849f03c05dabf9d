package evento

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
)

// fuzzTipos maps the fuzzer's byte to a subject type; "x.y" is not a known
// type. The first nine entries keep the order the committed corpus was
// written for; types added later go after them.
var fuzzTipos = []Tipo{
	AgendaItemDisponivel, ConselheiroCadastrado, CicloConcluido, AtribuicaoRecusada,
	ElegibilidadeAtualizada, DuplicidadeAgregada, ConselheiroSorteado, SorteioSemCandidatos,
	Tipo("x.y"), DemandaIniciada, SuspensaoExpirada, Varredura,
}

// FuzzDecodificar checks that Decodificar never panics and that a success
// carries every required field, valid, for the subject's type.
func FuzzDecodificar(f *testing.F) {
	for i, tipo := range fuzzTipos {
		if tipo.Consumido() {
			f.Add(uint8(i), mudar(f, tipo, func(env, p map[string]any) {}))
		}
	}
	f.Fuzz(func(t *testing.T, i uint8, data []byte) {
		tipo := fuzzTipos[int(i)%len(fuzzTipos)]
		ev, err := Decodificar(tipo, data)
		if err != nil {
			var in *Inutilizavel
			if !errors.As(err, &in) || !errors.Is(err, ErrInutilizavel) {
				t.Fatalf("error %T is not *Inutilizavel: %v", err, err)
			}
			if in.Motivo == "" || strings.ContainsAny(in.Motivo, "\r\n") || !utf8.ValidString(in.Motivo) {
				t.Fatalf("bad reason %q", in.Motivo)
			}
			return
		}
		verificarEvento(t, tipo, data, ev)
	})
}

func verificarEvento(t *testing.T, tipo Tipo, data []byte, ev Evento) {
	t.Helper()
	if len(data) > TamanhoMaximo || !json.Valid(data) {
		t.Fatal("accepted an oversized or invalid message")
	}
	if ev.Tipo != tipo || ev.EventID == uuid.Nil || !contem(versoes[tipo], ev.VersaoSchema) {
		t.Fatalf("bad envelope %+v", ev.Envelope)
	}
	if len(ev.Envelope.Payload) == 0 || ev.Envelope.Payload[0] != '{' || !json.Valid(ev.Envelope.Payload) {
		t.Fatalf("bad raw payload %q", ev.Envelope.Payload)
	}
	if ev.CorrelacaoID != nil && *ev.CorrelacaoID == "" {
		t.Fatal("empty correlacao_id kept")
	}
	ids := func(us ...uuid.UUID) {
		for _, u := range us {
			if u == uuid.Nil {
				t.Fatalf("nil uuid in %+v", ev.Payload)
			}
		}
	}
	switch p := ev.Payload.(type) {
	case AgendaItemDisponivelPayload:
		ids(p.DemandaID, p.UnidadeCivicaID)
		n := utf8.RuneCountInString(p.CategoriaID)
		if n < 1 || n > 10 || strings.IndexByte(p.CategoriaID, 0) >= 0 ||
			p.NivelPrecedencia < 1 || p.NivelPrecedencia > 5 || !(p.ScoreFinal < 1e10 && p.ScoreFinal > -1e10) {
			t.Fatalf("bad agenda payload %+v", p)
		}
		if p.GrupoID != nil {
			ids(*p.GrupoID)
		}
	case ConselheiroCadastradoPayload:
		ids(p.ConselheiroID, p.CidadaoID, p.UnidadeCivicaID)
		if p.NivelAtuacao < 1 || p.NivelAtuacao > 7 || p.Status == "" {
			t.Fatalf("bad cadastro payload %+v", p)
		}
	case ConselheiroCicloConcluidoPayload:
		ids(p.ConselheiroID, p.DemandaID)
		if p.MotivoEncerramento == "" {
			t.Fatalf("bad ciclo payload %+v", p)
		}
		if p.UnidadeCivicaID != nil {
			ids(*p.UnidadeCivicaID)
		}
	case ConselheiroAtribuicaoRecusadaPayload:
		ids(p.ConselheiroID, p.DemandaID, p.UnidadeCivicaID)
		switch p.Motivo {
		case RecusaExplicita, RiscoPessoal, TimeoutResposta, ForaDoTerritorio:
		default:
			t.Fatalf("bad motivo %q", p.Motivo)
		}
	case ConselheiroElegibilidadeAtualizadaPayload:
		ids(p.UnidadeCivicaID)
		if p.VersaoParametros == "" {
			t.Fatal("elegibilidade without versao_parametros")
		}
	case CapacitacaoConcluidaPayload:
		ids(p.ConselheiroID)
	case VinculoValidadoPayload:
		ids(p.ConselheiroID, p.UnidadeCivicaID)
	case ProgressaoHabilitadaPayload:
		ids(p.ConselheiroID, p.UnidadeCivicaID)
		if p.NivelAtuacao < 1 || p.NivelAtuacao > 7 {
			t.Fatalf("nivel_atuacao %d", p.NivelAtuacao)
		}
	case DuplicidadeAgregadaPayload:
		ids(p.AgregadoID, p.RepresentanteDemandaID)
		ids(p.Membros...)
		if p.Membros == nil {
			t.Fatal("nil membros")
		}
	case DemandaIniciadaPayload:
		ids(p.ConselheiroID, p.DemandaID)
	case SuspensaoExpiradaPayload:
		ids(p.ConselheiroID)
	case VarreduraPayload:
		if p.DemandaID == nil && p.UnidadeCivicaID == nil {
			t.Fatal("varredura without demand or unit")
		}
		if p.DemandaID != nil {
			ids(*p.DemandaID)
		}
		if p.UnidadeCivicaID != nil {
			ids(*p.UnidadeCivicaID)
		}
	case json.RawMessage:
		if tipo.Consumido() {
			t.Fatalf("consumed type %s without typed payload", tipo)
		}
	default:
		t.Fatalf("payload %T for %s", ev.Payload, tipo)
	}
	if want := map[Tipo]string{
		AgendaItemDisponivel:    "evento.AgendaItemDisponivelPayload",
		ConselheiroCadastrado:   "evento.ConselheiroCadastradoPayload",
		CicloConcluido:          "evento.ConselheiroCicloConcluidoPayload",
		AtribuicaoRecusada:      "evento.ConselheiroAtribuicaoRecusadaPayload",
		ElegibilidadeAtualizada: "evento.ConselheiroElegibilidadeAtualizadaPayload",
		DuplicidadeAgregada:     "evento.DuplicidadeAgregadaPayload",
		DemandaIniciada:         "evento.DemandaIniciadaPayload",
	}[tipo]; want != "" && fmt.Sprintf("%T", ev.Payload) != want {
		t.Fatalf("payload %T for %s", ev.Payload, tipo)
	}
}

// TestCorpusSementes keeps the committed seed corpus honest: files named
// "valido-*" decode, every other one is unusable.
func TestCorpusSementes(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodificar")
	entradas, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entradas) < len(Consumidos)+10 {
		t.Fatalf("only %d seeds", len(entradas))
	}
	for _, e := range entradas {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		linhas := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(linhas) != 3 || linhas[0] != "go test fuzz v1" {
			t.Fatalf("%s: bad format", e.Name())
		}
		i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(linhas[1], "byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(linhas[2], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		tipo := fuzzTipos[i%len(fuzzTipos)]
		ev, err := Decodificar(tipo, []byte(data))
		if valido := strings.HasPrefix(e.Name(), "valido-"); valido != (err == nil) {
			t.Errorf("%s: err = %v", e.Name(), err)
		} else if valido {
			verificarEvento(t, tipo, []byte(data), ev)
		}
	}
}
