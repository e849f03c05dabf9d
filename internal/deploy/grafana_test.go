package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/formigueiro/d6a/internal/httpapi"
)

// painel is what the test reads of a Grafana panel; rows nest theirs.
type painel struct {
	ID         int      `json:"id"`
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Panels     []painel `json:"panels"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// variavelGrafana is a dashboard variable in an expression: $__rate_interval,
// ${datasource}, $job.
var variavelGrafana = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)

// The dashboard deploy/grafana-d6a.json: every expression is PromQL that
// names only metrics d6a serves on /metrics, and the panels the operators
// need are there (draws and outcomes, the queue, the consumer, draw
// latency, dead letters, witnesses, the fairness p-value, the situacao
// route).
func TestDashboardGrafana(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana-d6a.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string   `json:"uid"`
		Title      string   `json:"title"`
		Panels     []painel `json:"panels"`
		Templating struct {
			List []struct {
				Name, Type, Query string
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("deploy/grafana-d6a.json: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard has no uid or title")
	}
	if len(d.Templating.List) == 0 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("want a Prometheus datasource variable named datasource, got %+v", d.Templating.List)
	}
	conhecidas := metricasExpostas(t)
	usadas := map[string]bool{}
	// situacao: the label values of rota the expressions select.
	rotas := map[string]bool{}
	ids := map[int]bool{}
	var visitar func([]painel)
	visitar = func(ps []painel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type == "row" {
				visitar(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not query the datasource variable", p.Title)
			}
			for _, alvo := range p.Targets {
				// Grafana replaces its variables before Prometheus sees the query.
				expr := variavelGrafana.ReplaceAllString(alvo.Expr, "5m")
				e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
				if err != nil {
					t.Errorf("panel %q, query %s: %q is not PromQL: %v", p.Title, alvo.RefID, alvo.Expr, err)
					continue
				}
				parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
					vs, ok := n.(*parser.VectorSelector)
					if !ok {
						return nil
					}
					usadas[vs.Name] = true
					if !conhecidas[vs.Name] {
						t.Errorf("panel %q, query %s: metric %q is not on d6a's /metrics", p.Title, alvo.RefID, vs.Name)
					}
					for _, m := range vs.LabelMatchers {
						if m.Name == "rota" && m.Type == labels.MatchEqual {
							rotas[m.Value] = true
						}
					}
					return nil
				})
			}
		}
	}
	visitar(d.Panels)
	for _, m := range []string{
		"d6a_sorteios_total", "d6a_sem_candidatos_total", // draws and outcomes
		"d6a_fila_pendentes_size", "d6a_fila_pendente_mais_antiga_segundos", // the queue
		"d6a_consumer_lag",                    // the consumer
		"d6a_sorteio_duracao_segundos_bucket", // draw latency quantiles
		"d6a_dead_letters_total",
		"d6a_testemunha_cossinatura_idade_segundos",
		"d6a_estatistica_p_valor",
		"d6a_http_duracao_segundos_count", // the situacao route's rate and errors
	} {
		if !usadas[m] {
			t.Errorf("no panel queries %s", m)
		}
	}
	if !rotas[httpapi.RotaSituacao] || len(rotas) != 1 {
		t.Errorf("the route panels select rota %v, want only %q", keys(rotas), httpapi.RotaSituacao)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
