package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
}

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Configs  map[string]struct {
		Content string `yaml:"content"`
	} `yaml:"configs"`
}

// The topology of README.md "Operating d6a", as make test-cluster runs it.
var (
	natsNodes  = []string{"nats-1", "nats-2", "nats-3"}
	pgNodes    = []string{"postgres-primary", "postgres-standby"}
	d6aReplica = []string{"d6a-1", "d6a-2"}
)

type service struct {
	Image       string      `yaml:"image"`
	Build       any         `yaml:"build"`
	Command     any         `yaml:"command"`
	Environment environment `yaml:"environment"`
	DependsOn   yaml.Node   `yaml:"depends_on"`
	Healthcheck *struct {
		Test    any  `yaml:"test"`
		Disable bool `yaml:"disable"`
	} `yaml:"healthcheck"`
	Ports   []string `yaml:"ports"`
	Configs []struct {
		Source string `yaml:"source"`
		Target string `yaml:"target"`
	} `yaml:"configs"`
	Entrypoint any `yaml:"entrypoint"`
}

// environment accepts both compose forms: a map and a list of NAME=value.
type environment map[string]string

func (e *environment) UnmarshalYAML(n *yaml.Node) error {
	*e = environment{}
	switch n.Kind {
	case yaml.MappingNode:
		var m map[string]*string
		if err := n.Decode(&m); err != nil {
			return err
		}
		for k, v := range m {
			if v == nil {
				(*e)[k] = ""
			} else {
				(*e)[k] = *v
			}
		}
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			(*e)[k] = v
		}
	}
	return nil
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML: %v", err)
	}
	return c
}

func TestComposeServicesHaveHealthchecks(t *testing.T) {
	c := loadCompose(t)
	if _, ok := c.Services["nats"]; ok {
		t.Error("the single nats service is back: one node can lose acknowledged writes")
	}
	for _, name := range append(append(append([]string{}, natsNodes...), pgNodes...), d6aReplica...) {
		s, ok := c.Services[name]
		if !ok {
			t.Errorf("service %q missing", name)
			continue
		}
		if s.Healthcheck == nil || s.Healthcheck.Disable || s.Healthcheck.Test == nil {
			t.Errorf("service %q has no healthcheck", name)
			continue
		}
		probe := map[string]string{"nats": "/healthz", "postgres": "pg_isready", "d6a": "/readyz"}[strings.SplitN(name, "-", 2)[0]]
		if !strings.Contains(flatten(s.Healthcheck.Test), probe) {
			t.Errorf("%s healthcheck %v does not use %s", name, s.Healthcheck.Test, probe)
		}
	}
}

// TestComposeNATSCluster: three servers of one cluster, each with
// sync_interval: always, and the streams created at 3 replicas.
func TestComposeNATSCluster(t *testing.T) {
	c := loadCompose(t)
	for _, name := range natsNodes {
		s := c.Services[name]
		if len(s.Configs) != 1 {
			t.Errorf("%s: want its server configuration through one config, got %v", name, s.Configs)
			continue
		}
		conf := c.Configs[s.Configs[0].Source].Content
		if !strings.Contains(flatten(s.Command), s.Configs[0].Target) {
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
	job, ok := c.Services["nats-streams"]
	if !ok || len(job.Configs) != 1 {
		t.Fatal("no nats-streams job creating the streams before d6a")
	}
	script := c.Configs[job.Configs[0].Source].Content
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
// standby built from it with pg_basebackup -R.
func TestComposePostgresStandby(t *testing.T) {
	c := loadCompose(t)
	var primario, standby string
	for _, cf := range c.Services["postgres-primary"].Configs {
		primario += c.Configs[cf.Source].Content
	}
	for _, cf := range c.Services["postgres-standby"].Configs {
		standby += c.Configs[cf.Source].Content
	}
	if !strings.Contains(primario, "synchronous_standby_names = '*'") || !strings.Contains(primario, "host replication") {
		t.Errorf("the primary is not set up for a synchronous standby (synchronous_standby_names, pg_hba replication):\n%s", primario)
	}
	if !strings.Contains(standby, "pg_basebackup") || !strings.Contains(standby, " -R") || !strings.Contains(standby, "postgres-primary") {
		t.Errorf("the standby is not a base backup of the primary with -R:\n%s", standby)
	}
	if !strings.Contains(flatten(c.Services["postgres-standby"].Entrypoint), "/etc/d6a/postgres-standby.sh") {
		t.Errorf("the standby does not run its start script: entrypoint %v", c.Services["postgres-standby"].Entrypoint)
	}
}

func TestComposeD6aWiring(t *testing.T) {
	c := loadCompose(t)
	portas := map[string]bool{}
	for _, name := range d6aReplica {
		d, ok := c.Services[name]
		if !ok {
			t.Errorf("service %s missing", name)
			continue
		}
		if d.Build == nil {
			t.Errorf("%s is not built from the repository (build: .)", name)
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
		if got, want := d.Environment["D6A_NATS_URL"], "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222"; got != want {
			t.Errorf("%s D6A_NATS_URL = %q, want every node: %q", name, got, want)
		}
		db := d.Environment["D6A_DATABASE_URL"]
		if !strings.Contains(db, "@postgres-primary:5432,postgres-standby:5432/") || !strings.Contains(db, "target_session_attrs=read-write") {
			t.Errorf("%s D6A_DATABASE_URL = %q: want both hosts and target_session_attrs=read-write", name, db)
		}
		var deps map[string]struct {
			Condition string `yaml:"condition"`
		}
		if err := d.DependsOn.Decode(&deps); err != nil {
			t.Fatalf("%s depends_on is not the long form with conditions: %v", name, err)
		}
		for _, dep := range append(append([]string{}, natsNodes...), pgNodes...) {
			if deps[dep].Condition != "service_healthy" {
				t.Errorf("%s depends_on %s: condition %q, want service_healthy", name, dep, deps[dep].Condition)
			}
		}
		if deps["nats-streams"].Condition != "service_completed_successfully" {
			t.Errorf("%s does not wait for the streams at 3 replicas (nats-streams: %q)", name, deps["nats-streams"].Condition)
		}
		for _, p := range d.Ports {
			if strings.HasSuffix(p, ":8080") {
				portas[p] = true
			}
		}
	}
	if len(portas) != len(d6aReplica) {
		t.Errorf("d6a replicas publish %v: want one host port each onto 8080", portas)
	}
}

// TestComposeConfig asks docker compose itself, when it is installed.
func TestComposeConfig(t *testing.T) {
	if err := exec.Command("docker", "compose", "version").Run(); err != nil {
		t.Skip("docker compose not available")
	}
	cmd := exec.Command("docker", "compose", "-f", "docker-compose.yml", "config", "-q")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker compose config -q: %v\n%s", err, out)
	}
}

func flatten(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = flatten(p)
		}
		return strings.Join(parts, " ")
	case nil:
		return ""
	default:
		b, _ := yaml.Marshal(x)
		return string(b)
	}
}
