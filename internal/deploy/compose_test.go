package deploy

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// contractVars are the variables of CONTRACT §2 (configuration), the only
// ones the compose file may set for d6a.
var contractVars = map[string]bool{
	"D6A_DATABASE_URL":           true,
	"D6A_NATS_URL":               true,
	"D6A_NATS_EMBEDDED_ADDR":     true,
	"D6A_DATA_DIR":               true,
	"D6A_HTTP_ADDR":              true,
	"D6A_JWT_SECRET":             true,
	"D6A_JWT_PUBLIC_KEY_FILE":    true,
	"D6A_STREAM":                 true,
	"D6A_SUBJECT_PREFIX":         true,
	"D6A_N_RECUSAS_SUSPENSAO":    true,
	"D6A_T_SUSPENSAO_DIAS":       true,
	"D6A_TIMEOUT_RESPOSTA_HORAS": true,
	"D6A_THROTTLE_POR_MINUTO":    true,
	"D6A_HIERARQUIA_TTL":         true,
	"D6A_MAX_ENTREGAS":           true,
	"D6A_LOG_LEVEL":              true,
	"D6A_LOG_FORMAT":             true,
	"D6A_LOG_KEY_FILE":           true,
	"D6A_LOG_ORIGIN":             true,
	"D6A_MIGRATE":                true,
	"D6A_BEACON_URL":             true,
	"D6A_BEACON_CHAVE":           true,
}

// The topology of README.md "Operating d6a", as make test-cluster runs it.
var (
	natsNodes  = []string{"nats-1", "nats-2", "nats-3"}
	pgNodes    = []string{"postgres-primary", "postgres-standby"}
	d6aReplica = []string{"d6a-1", "d6a-2"}
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// carregar loads a compose file the way docker compose does, with
// compose-go (the Compose Specification's reference library): the YAML is
// validated against the specification's JSON Schema, interpolated with env
// (the defaults of ${VAR:-x} when empty), merged (x- anchors, <<), and
// checked for consistency (depends_on, configs and volumes that exist).
func carregar(t *testing.T, conteudo []byte, env map[string]string) (*types.Project, error) {
	t.Helper()
	raiz := repoRoot(t)
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  raiz,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(raiz, "docker-compose.yml"), Content: conteudo}},
		Environment: env,
	}, func(o *loader.Options) { o.SetProjectName("d6a", true) })
}

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := carregar(t, b, map[string]string{})
	if err != nil {
		t.Fatalf("docker-compose.yml does not load against the Compose Specification: %v", err)
	}
	return p
}

// The file is a valid Compose Specification document; the loader refuses
// one that is not (an unknown key, a dependency on no service), so the
// check can fail.
func TestComposeCarregaNaEspecificacao(t *testing.T) {
	p := loadCompose(t)
	want := append(append(append([]string{"nats-streams", "d6a-migrate"}, natsNodes...), pgNodes...), d6aReplica...)
	sort.Strings(want)
	got := p.ServiceNames()
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("services %v, want %v", got, want)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for nome, ruim := range map[string]string{
		"an unknown service key": strings.Replace(string(b), "  nats-streams:\n    image:", "  nats-streams:\n    imagem: x\n    image:", 1),
		"a dependency on no service": strings.Replace(string(b), "    depends_on:\n      postgres-primary:\n        condition: service_healthy\n    volumes:",
			"    depends_on:\n      postgres-primario:\n        condition: service_healthy\n    volumes:", 1),
		"an unknown depends_on condition": strings.Replace(string(b), "condition: service_completed_successfully", "condition: service_done", 1),
	} {
		if ruim == string(b) {
			t.Fatalf("%s: the mutation did not apply", nome)
		}
		_, err := carregar(t, []byte(ruim), map[string]string{})
		if err == nil {
			t.Errorf("a compose file with %s loaded", nome)
			continue
		}
		t.Logf("with %s: %v", nome, err)
	}
}

func TestComposeServicesHaveHealthchecks(t *testing.T) {
	p := loadCompose(t)
	if _, ok := p.Services["nats"]; ok {
		t.Error("the single nats service is back: one node can lose acknowledged writes")
	}
	for _, name := range append(append(append([]string{}, natsNodes...), pgNodes...), d6aReplica...) {
		s, ok := p.Services[name]
		if !ok {
			t.Errorf("service %q missing", name)
			continue
		}
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			t.Errorf("service %q has no healthcheck", name)
			continue
		}
		probe := map[string]string{"nats": "/healthz", "postgres": "pg_isready", "d6a": "/readyz"}[strings.SplitN(name, "-", 2)[0]]
		if !strings.Contains(strings.Join(s.HealthCheck.Test, " "), probe) {
			t.Errorf("%s healthcheck %v does not use %s", name, s.HealthCheck.Test, probe)
		}
		if s.HealthCheck.Interval == nil || s.HealthCheck.Retries == nil || *s.HealthCheck.Retries == 0 {
			t.Errorf("%s healthcheck has no interval or retries", name)
		}
	}
}

// TestComposeNATSCluster: three servers of one cluster, each with
// sync_interval: always, and the streams created at 3 replicas.
func TestComposeNATSCluster(t *testing.T) {
	p := loadCompose(t)
	for _, name := range natsNodes {
		s := p.Services[name]
		if len(s.Configs) != 2 {
			t.Errorf("%s: want its server configuration and the permissions through two configs, got %v", name, s.Configs)
			continue
		}
		conf := p.Configs[s.Configs[0].Source].Content
		if !strings.Contains(strings.Join(s.Command, " "), s.Configs[0].Target) {
			t.Errorf("%s: command %v does not load %s", name, s.Command, s.Configs[0].Target)
		}
		for _, want := range []string{"server_name: " + name, "sync_interval: always", "jetstream", "cluster {"} {
			if !strings.Contains(conf, want) {
				t.Errorf("%s configuration lacks %q:\n%s", name, want, conf)
			}
		}
		for _, other := range natsNodes {
			if !strings.Contains(conf, "nats-route://"+other+":6222") {
				t.Errorf("%s routes do not name %s", name, other)
			}
		}
	}
	job, ok := p.Services["nats-streams"]
	if !ok || len(job.Configs) != 1 {
		t.Fatal("no nats-streams job creating the streams before d6a")
	}
	for _, dep := range natsNodes {
		if job.DependsOn[dep].Condition != types.ServiceConditionHealthy {
			t.Errorf("nats-streams depends_on %s: condition %q, want service_healthy", dep, job.DependsOn[dep].Condition)
		}
	}
	script := p.Configs[job.Configs[0].Source].Content
	for _, stream := range []string{"EVENTOS", "D6A_DLQ"} {
		found := false
		for _, l := range strings.Split(script, "\n") {
			if strings.Contains(l, "stream add "+stream) && strings.Contains(l, "--replicas 3") && strings.Contains(l, "--storage file") {
				found = true
			}
		}
		if !found {
			t.Errorf("stream %s is not created with --replicas 3 --storage file:\n%s", stream, script)
		}
	}
}

// TestComposePostgresStandby: a primary with synchronous replication and a
// standby built from it with pg_basebackup -R, started after it is healthy.
func TestComposePostgresStandby(t *testing.T) {
	p := loadCompose(t)
	primario, standby := p.Services["postgres-primary"], p.Services["postgres-standby"]
	var initPrimario, inicioStandby string
	for _, cf := range primario.Configs {
		initPrimario += p.Configs[cf.Source].Content
	}
	for _, cf := range standby.Configs {
		inicioStandby += p.Configs[cf.Source].Content
	}
	if !strings.Contains(initPrimario, "synchronous_standby_names = '*'") || !strings.Contains(initPrimario, "host replication") {
		t.Errorf("the primary is not set up for a synchronous standby (synchronous_standby_names, pg_hba replication):\n%s", initPrimario)
	}
	cmd := strings.Join(primario.Command, " ")
	for _, want := range []string{"wal_level=replica", "max_wal_senders=", "synchronous_commit=on"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the primary's command %q lacks %s", cmd, want)
		}
	}
	if !strings.Contains(inicioStandby, "pg_basebackup") || !strings.Contains(inicioStandby, " -R") || !strings.Contains(inicioStandby, "postgres-primary") {
		t.Errorf("the standby is not a base backup of the primary with -R:\n%s", inicioStandby)
	}
	if !strings.Contains(inicioStandby, "hot_standby=on") {
		t.Errorf("the standby does not serve reads while it follows (hot_standby=on):\n%s", inicioStandby)
	}
	if !strings.Contains(strings.Join(standby.Entrypoint, " "), "/etc/d6a/postgres-standby.sh") {
		t.Errorf("the standby does not run its start script: entrypoint %v", standby.Entrypoint)
	}
	if standby.DependsOn["postgres-primary"].Condition != types.ServiceConditionHealthy {
		t.Errorf("the standby does not wait for a healthy primary: %v", standby.DependsOn)
	}
}

func TestComposeD6aWiring(t *testing.T) {
	p := loadCompose(t)
	portas := map[string]bool{}
	for _, name := range d6aReplica {
		d, ok := p.Services[name]
		if !ok {
			t.Errorf("service %s missing", name)
			continue
		}
		if d.Build == nil {
			t.Errorf("%s is not built from the repository (build: .)", name)
		} else if d.Build.Context != repoRoot(t) && filepath.Clean(d.Build.Context) != filepath.Clean(repoRoot(t)) {
			t.Errorf("%s builds %s, not the repository", name, d.Build.Context)
		}
		var unknown []string
		for k := range d.Environment {
			if !contractVars[k] {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		if len(unknown) > 0 {
			t.Errorf("%s environment names variables outside CONTRACT §2: %v", name, unknown)
		}
		env := func(k string) string {
			if v := d.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if got, want := env("D6A_NATS_URL"), "nats://d6a:d6a@nats-1:4222,nats://d6a:d6a@nats-2:4222,nats://d6a:d6a@nats-3:4222"; got != want {
			t.Errorf("%s D6A_NATS_URL = %q, want every node as user d6a: %q", name, got, want)
		}
		db := env("D6A_DATABASE_URL")
		if !strings.Contains(db, "@postgres-primary:5432,postgres-standby:5432/") || !strings.Contains(db, "target_session_attrs=read-write") {
			t.Errorf("%s D6A_DATABASE_URL = %q: want both hosts and target_session_attrs=read-write", name, db)
		}
		for _, dep := range append(append([]string{}, natsNodes...), pgNodes...) {
			if c := d.DependsOn[dep].Condition; c != types.ServiceConditionHealthy {
				t.Errorf("%s depends_on %s: condition %q, want service_healthy", name, dep, c)
			}
		}
		if c := d.DependsOn["nats-streams"].Condition; c != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("%s does not wait for the streams at 3 replicas (nats-streams: %q)", name, c)
		}
		for _, port := range d.Ports {
			if port.Target == 8080 && port.Published != "" {
				portas[port.Published] = true
			}
		}
	}
	if len(portas) != len(d6aReplica) {
		t.Errorf("d6a replicas publish %v: want one host port each onto 8080", portas)
	}
}

// TestComposeMenorPrivilegio: no d6a process is a superuser. The migrations
// run once as the schema's owner (d6a-migrate), the replicas as the runtime
// role with D6A_MIGRATE=false and wait for the migrations; the primary
// creates both roles with deploy/postgres/papeis.sql; every NATS server
// loads deploy/nats/permissoes.conf.
func TestComposeMenorPrivilegio(t *testing.T) {
	p := loadCompose(t)
	env := func(s types.ServiceConfig, k string) string {
		if v := s.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	mig, ok := p.Services["d6a-migrate"]
	if !ok {
		t.Fatal("no d6a-migrate job")
	}
	if strings.Join(mig.Command, " ") != "migrate" || !strings.HasPrefix(env(mig, "D6A_DATABASE_URL"), "postgres://d6a_dono:") {
		t.Errorf("d6a-migrate: command %v, D6A_DATABASE_URL %q: want `d6a migrate` as d6a_dono", mig.Command, env(mig, "D6A_DATABASE_URL"))
	}
	for _, name := range d6aReplica {
		d := p.Services[name]
		if !strings.HasPrefix(env(d, "D6A_DATABASE_URL"), "postgres://d6a_app:") || env(d, "D6A_MIGRATE") != "false" {
			t.Errorf("%s: D6A_DATABASE_URL %q, D6A_MIGRATE %q: want the runtime role d6a_app and false", name, env(d, "D6A_DATABASE_URL"), env(d, "D6A_MIGRATE"))
		}
		if !strings.Contains(env(d, "D6A_DATABASE_URL"), "sslmode=") {
			t.Errorf("%s: D6A_DATABASE_URL names no sslmode", name)
		}
		if c := d.DependsOn["d6a-migrate"].Condition; c != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("%s does not wait for the migrations (d6a-migrate: %q)", name, c)
		}
	}
	for nome, s := range p.Services {
		for k, v := range s.Environment {
			if v != nil && strings.Contains(k, "DATABASE_URL") && (strings.Contains(*v, "//postgres:") || strings.Contains(*v, "//d6a:")) {
				t.Errorf("%s: %s connects as a superuser: %s", nome, k, *v)
			}
		}
	}
	var papeis string
	for _, cf := range p.Services["postgres-primary"].Configs {
		c := p.Configs[cf.Source]
		papeis += c.Content
		if c.File != "" && strings.HasSuffix(c.File, filepath.Join("deploy", "postgres", "papeis.sql")) && cf.Target == "/etc/d6a/papeis.sql" {
			papeis += " [papeis.sql mounted]"
		}
	}
	if !strings.Contains(papeis, "-f /etc/d6a/papeis.sql") || !strings.Contains(papeis, "[papeis.sql mounted]") {
		t.Errorf("the primary does not create the roles with deploy/postgres/papeis.sql:\n%s", papeis)
	}
	for _, name := range natsNodes {
		s := p.Services[name]
		var conf string
		montado := false
		for _, cf := range s.Configs {
			c := p.Configs[cf.Source]
			conf += c.Content
			if strings.HasSuffix(c.File, filepath.Join("deploy", "nats", "permissoes.conf")) && cf.Target == "/etc/nats/permissoes.conf" {
				montado = true
			}
		}
		if !montado || !strings.Contains(conf, "include permissoes.conf") {
			t.Errorf("%s does not load deploy/nats/permissoes.conf beside its configuration", name)
		}
		for _, v := range usuariosNATS {
			if _, ok := s.Environment[v]; !ok {
				t.Errorf("%s: the password variable %s of deploy/nats/permissoes.conf is not passed", name, v)
			}
		}
	}
}
