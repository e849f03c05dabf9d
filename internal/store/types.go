package store

import "github.com/formigueiro/d6a/internal/store/dbsqlc"

// Rows and parameters of the generated queries, named here so callers need
// not import the generated package.
type (
	Recusa             = dbsqlc.D6aContadorRecusa
	Auditoria          = dbsqlc.D6aAuditoriaSorteio
	Outbox             = dbsqlc.D6aOutbox
	Offset             = dbsqlc.D6aConsumerOffset
	Atribuicao         = dbsqlc.D6aAtribuico
	UC                 = dbsqlc.CoreUcPolygon
	Candidato          = dbsqlc.BuscarCandidatosPorUcsRow
	OutboxPendente     = dbsqlc.BuscarOutboxPendentesRow
	ContagemPorStatus  = dbsqlc.ContarConselheirosPorStatusRow
	Situacao           = dbsqlc.BuscarSituacaoRow
	Parametros         = dbsqlc.D6aConfig
	AcaoAdministrativa = dbsqlc.D6aAcoesAdministrativa
	Trava              = dbsqlc.AdvisoryLockSorteioRow
	Ocupado            = dbsqlc.BuscarOcupadosRow
	ContagemAcoes      = dbsqlc.ContarAcoesPorTipoRow

	InserirConselheiroParams              = dbsqlc.InserirConselheiroParams
	RegistrarHierarquiaParams             = dbsqlc.RegistrarHierarquiaParams
	AtualizarStatusConselheiroParams      = dbsqlc.AtualizarStatusConselheiroParams
	MarcarConselheiroOcupadoParams        = dbsqlc.MarcarConselheiroOcupadoParams
	SuspenderConselheiroParams            = dbsqlc.SuspenderConselheiroParams
	BuscarConselheirosPorUcsEStatusParams = dbsqlc.BuscarConselheirosPorUcsEStatusParams
	InserirAtribuicaoParams               = dbsqlc.InserirAtribuicaoParams
	AtualizarStatusAtribuicaoParams       = dbsqlc.AtualizarStatusAtribuicaoParams
	AtivaPorConselheiroEDemandaParams     = dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams
	InserirFilaPendenteParams             = dbsqlc.InserirFilaPendenteParams
	ContarRecusasDesdeDataParams          = dbsqlc.ContarRecusasDesdeDataParams
	InserirRecusaParams                   = dbsqlc.InserirRecusaParams
	UpsertOffsetParams                    = dbsqlc.UpsertOffsetParams
	SeedOffsetParams                      = dbsqlc.SeedOffsetParams
	RegistrarEventoProcessadoParams       = dbsqlc.RegistrarEventoProcessadoParams
	RegistrarProcessamentoParams          = dbsqlc.RegistrarProcessamentoParams
	GuardasAgendaParams                   = dbsqlc.GuardasAgendaParams
	GuardasAgendaRow                      = dbsqlc.GuardasAgendaRow
	InserirAuditoriaParams                = dbsqlc.InserirAuditoriaParams
	InserirOutboxParams                   = dbsqlc.InserirOutboxParams
	ExisteOutboxParams                    = dbsqlc.ExisteOutboxPorTipoCorrelacaoParams
	MarcarOutboxPublicadosParams          = dbsqlc.MarcarOutboxPublicadosParams
	MarcarPorEventIdParams                = dbsqlc.MarcarOutboxPublicadosPorEventIdParams
	DegrausCadastradosParams              = dbsqlc.BuscarDegrausCadastradosParams
	DegrauCadastrado                      = dbsqlc.BuscarDegrausCadastradosRow
	MarcarOutboxEntradasParams            = dbsqlc.MarcarOutboxEntradasParams
	RegistrarProcessamentosParams         = dbsqlc.RegistrarProcessamentosParams
	GravarSorteiosParams                  = dbsqlc.GravarSorteiosParams
	GuardasAgendaLoteParams               = dbsqlc.GuardasAgendaLoteParams
	InserirParametrosParams               = dbsqlc.InserirParametrosParams
	SemearParametrosParams                = dbsqlc.SemearParametrosParams
	RegistrarAcaoParams                   = dbsqlc.RegistrarAcaoParams
	ListarAcoesParams                     = dbsqlc.ListarAcoesParams
	InserirSuspensaoParams                = dbsqlc.InserirSuspensaoParams
	RegistrarInicioParams                 = dbsqlc.RegistrarInicioParams
	UltimaPorConselheiroEDemandaParams    = dbsqlc.BuscarUltimaAtribuicaoPorConselheiroEDemandaParams
	BuscarOcupadosParams                  = dbsqlc.BuscarOcupadosParams
	BuscarAtivasSemInicioParams           = dbsqlc.BuscarAtivasSemInicioParams
	ListarFilaParams                      = dbsqlc.ListarFilaParams
	InativarConselheiroParams             = dbsqlc.InativarConselheiroParams
)
