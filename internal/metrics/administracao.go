package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/formigueiro/d6a/internal/store"
)

// FaixasIdade are the age buckets of d6a_fila_pendentes_por_idade, the
// faixa label, youngest first.
var FaixasIdade = []string{"ate_1h", "1h_24h", "24h_72h", "72h_7d", "mais_7d"}

// ResumoFila is the pending queue by age.
type ResumoFila struct {
	// PorFaixa counts pending demands per FaixasIdade entry.
	PorFaixa map[string]int64
	// MaisAntiga is the oldest pending demand's age (0 when empty).
	MaisAntiga time.Duration
}

// FonteOperacao is where the operation gauges of issue 13 come from, read
// at each scrape like Fonte's.
type FonteOperacao interface {
	// Fila summarises the pending queue by age.
	Fila(ctx context.Context) (ResumoFila, error)
	// OcupadosSemInicio counts active assignments older than the timeout
	// in force without conselheiro.demanda_iniciada (spec §9).
	OcupadosSemInicio(ctx context.Context) (int64, error)
	// AcoesPorTipo counts d6a.acoes_administrativas by acao.
	AcoesPorTipo(ctx context.Context) (map[string]int64, error)
	// VersaoParametros is the version of d6a.config in force.
	VersaoParametros(ctx context.Context) (int64, error)
}

// RegistrarOperacao adds the operation gauges read from f: the age of the
// oldest pending demand, pending demands by age bucket, counsellors
// occupied without a start past the timeout, administrative actions by
// kind (acoes are pre-created at zero) and the parameter version in force.
func (m *Metrics) RegistrarOperacao(f FonteOperacao, acoes []string) {
	m.reg.MustRegister(m.emCache(&operacao{
		f: f, acoes: acoes,
		maisAntiga: prometheus.NewDesc("d6a_fila_pendente_mais_antiga_segundos",
			"Age in seconds of the oldest demand in d6a.fila_pendentes (0 when empty).", nil, nil),
		porIdade: prometheus.NewDesc("d6a_fila_pendentes_por_idade",
			"Pending demands by age bucket (faixa: ate_1h, 1h_24h, 24h_72h, 72h_7d, mais_7d).", []string{"faixa"}, nil),
		semInicio: prometheus.NewDesc("d6a_ocupados_sem_inicio",
			"Active assignments older than the response timeout in force without conselheiro.demanda_iniciada (spec §9).", nil, nil),
		acoesTotal: prometheus.NewDesc("d6a_acoes_administrativas_total",
			"Administrative actions recorded in d6a.acoes_administrativas, by acao.", []string{"acao"}, nil),
		versao: prometheus.NewDesc("d6a_parametros_versao",
			"Version of d6a.config (N_RECUSAS_SUSPENSAO, T_SUSPENSAO_DIAS, TIMEOUT_RESPOSTA_HORAS) in force.", nil, nil),
	}))
}

type operacao struct {
	f     FonteOperacao
	acoes []string

	maisAntiga, porIdade, semInicio, acoesTotal, versao *prometheus.Desc
}

func (o *operacao) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.maisAntiga
	ch <- o.porIdade
	ch <- o.semInicio
	ch <- o.acoesTotal
	ch <- o.versao
}

func (o *operacao) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	if r, err := o.f.Fila(ctx); err != nil {
		skip("d6a_fila_pendentes_por_idade", err)
	} else {
		ch <- prometheus.MustNewConstMetric(o.maisAntiga, prometheus.GaugeValue, r.MaisAntiga.Seconds())
		for _, faixa := range FaixasIdade {
			ch <- prometheus.MustNewConstMetric(o.porIdade, prometheus.GaugeValue, float64(r.PorFaixa[faixa]), faixa)
		}
	}
	if n, err := o.f.OcupadosSemInicio(ctx); err != nil {
		skip("d6a_ocupados_sem_inicio", err)
	} else {
		ch <- prometheus.MustNewConstMetric(o.semInicio, prometheus.GaugeValue, float64(n))
	}
	if por, err := o.f.AcoesPorTipo(ctx); err != nil {
		skip("d6a_acoes_administrativas_total", err)
	} else {
		vistos := map[string]bool{}
		for _, a := range o.acoes {
			vistos[a] = true
			ch <- prometheus.MustNewConstMetric(o.acoesTotal, prometheus.CounterValue, float64(por[a]), a)
		}
		for a, n := range por {
			if !vistos[a] {
				ch <- prometheus.MustNewConstMetric(o.acoesTotal, prometheus.CounterValue, float64(n), a)
			}
		}
	}
	if v, err := o.f.VersaoParametros(ctx); err != nil {
		skip("d6a_parametros_versao", err)
	} else {
		ch <- prometheus.MustNewConstMetric(o.versao, prometheus.GaugeValue, float64(v))
	}
}

// StoreFonteOperacao reads the operation gauges from the database at the
// time now gives.
func StoreFonteOperacao(st *store.Store, now func() time.Time) FonteOperacao {
	return storeOperacao{db: st.Read(), now: now}
}

type storeOperacao struct {
	db  Leitura
	now func() time.Time
}

func (s storeOperacao) Fila(ctx context.Context) (ResumoFila, error) {
	r, err := s.db.FilaPorIdade(ctx, s.now())
	if err != nil {
		return ResumoFila{}, err
	}
	return ResumoFila{
		PorFaixa: map[string]int64{
			"ate_1h": r.Ate1h, "1h_24h": r.De1hA24h, "24h_72h": r.De24hA72h, "72h_7d": r.De72hA7d, "mais_7d": r.MaisDe7d,
		},
		MaisAntiga: r.MaisAntiga,
	}, nil
}

func (s storeOperacao) OcupadosSemInicio(ctx context.Context) (int64, error) {
	p, err := s.parametros(ctx)
	if err != nil {
		return 0, err
	}
	return s.db.TotalAtivasSemInicio(ctx, s.now().Add(-time.Duration(p.TimeoutRespostaHoras)*time.Hour))
}

func (s storeOperacao) AcoesPorTipo(ctx context.Context) (map[string]int64, error) {
	return s.db.TotalAcoesPorTipo(ctx)
}

func (s storeOperacao) VersaoParametros(ctx context.Context) (int64, error) {
	p, err := s.parametros(ctx)
	if err != nil {
		return 0, err
	}
	return int64(p.Versao), nil
}

// errSemParametros: d6a.config is empty until the boot seeds version 1;
// the gauges that need it are skipped.
var errSemParametros = errors.New("d6a.config vazia (boot não concluído)")

func (s storeOperacao) parametros(ctx context.Context) (store.VersaoParametros, error) {
	p, achou, err := s.db.VersaoVigente(ctx)
	if err == nil && !achou {
		err = errSemParametros
	}
	return p, err
}
