package deploy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/metrics"
)

// regras is the rule-file format of Prometheus (rule_files).
type regras struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// The alert rules parse as Prometheus would load them: known keys only,
// every expression valid PromQL, every duration valid, a severity and a
// runbook section of docs/operacao.md that exists, and only metrics d6a
// exposes. (model/rulefmt would drag in the whole PromQL engine and TSDB;
// the parser and this check cover what the file can get wrong.)
func TestAlertasValidos(t *testing.T) {
	raiz := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(raiz, "deploy", "alertas.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var r regras
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("deploy/alertas.yml: %v", err)
	}
	runbook, err := os.ReadFile(filepath.Join(raiz, "docs", "operacao.md"))
	if err != nil {
		t.Fatal(err)
	}
	conhecidas := metricasExpostas(t)
	vistos := map[string]bool{}
	n := 0
	for _, g := range r.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q empty or unnamed", g.Name)
		}
		for _, regra := range g.Rules {
			n++
			nome := regra.Alert
			if nome == "" || regra.Record != "" {
				t.Errorf("rule %q: want an alert rule", nome)
				continue
			}
			if vistos[nome] {
				t.Errorf("alert %s defined twice", nome)
			}
			vistos[nome] = true
			expr, err := parser.NewParser(parser.Options{}).ParseExpr(regra.Expr)
			if err != nil {
				t.Errorf("%s: expr %q: %v", nome, regra.Expr, err)
				continue
			}
			if expr.Type() != parser.ValueTypeVector {
				t.Errorf("%s: expr of type %s, want a vector", nome, expr.Type())
			}
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				if vs, ok := node.(*parser.VectorSelector); ok && !conhecidas[vs.Name] {
					t.Errorf("%s: metric %q is not on d6a's /metrics", nome, vs.Name)
				}
				return nil
			})
			if regra.For != "" {
				if _, err := model.ParseDuration(regra.For); err != nil {
					t.Errorf("%s: for %q: %v", nome, regra.For, err)
				}
			}
			if s := regra.Labels["severity"]; !slices.Contains([]string{"info", "warning", "critical"}, s) {
				t.Errorf("%s: severity %q", nome, s)
			}
			if regra.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", nome)
			}
			rb, ok := strings.CutPrefix(regra.Annotations["runbook"], "docs/operacao.md#")
			if !ok || !strings.Contains(string(runbook), `<a id="`+rb+`"></a>`) {
				t.Errorf("%s: runbook %q is not an anchor of docs/operacao.md", nome, regra.Annotations["runbook"])
			}
		}
	}
	if n < 5 || !vistos["D6aConselheiroOcupadoSemInicio"] || !vistos["D6aFilaPendenteAntiga"] {
		t.Errorf("%d alerts; want the stuck-counsellor and old-queue ones at least", n)
	}
}

// metricasExpostas gathers the names d6a's registry serves, histograms with
// their series suffixes.
func metricasExpostas(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(fonte{})
	m.Preparar("agenda.item_disponível")
	m.RegistrarOperacao(fonte{}, console.TiposAcao)
	m.DeadLetters.WithLabelValues("x")
	m.HTTPDuracao.WithLabelValues("/d6a/conselheiros/me/situacao", "200")
	m.Testemunhas().Acompanhar("w.example/w1", time.Now())
	m.Testemunhas().Cossinou("w.example/w1", time.Now())
	m.Testemunhas().Recusou("w.example/w1", 422)
	m.EstatisticaPValor()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range fams {
		out[f.GetName()] = true
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			out[f.GetName()+suf] = true
		}
	}
	return out
}

type fonte struct{}

func (fonte) Pendentes(context.Context) (int64, error) { return 1, nil }
func (fonte) ConselheirosPorStatus(context.Context) (map[string]int64, error) {
	return map[string]int64{"disponivel": 1}, nil
}
func (fonte) OutboxPendentes(context.Context) (int64, error) { return 0, nil }
func (fonte) ConsumerLag(context.Context) (map[string]uint64, error) {
	return map[string]uint64{"agenda.item_disponível": 0}, nil
}
func (fonte) Fila(context.Context) (metrics.ResumoFila, error)       { return metrics.ResumoFila{}, nil }
func (fonte) OcupadosSemInicio(context.Context) (int64, error)       { return 0, nil }
func (fonte) AcoesPorTipo(context.Context) (map[string]int64, error) { return nil, nil }
func (fonte) VersaoParametros(context.Context) (int64, error)        { return 1, nil }
