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
}

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
	Ports []string `yaml:"ports"`
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
	for _, name := range []string{"nats", "postgres", "d6a"} {
		s, ok := c.Services[name]
		if !ok {
			t.Errorf("service %q missing", name)
			continue
		}
		if s.Healthcheck == nil || s.Healthcheck.Disable || s.Healthcheck.Test == nil {
			t.Errorf("service %q has no healthcheck", name)
		}
	}
	if hc := c.Services["d6a"].Healthcheck; hc != nil && !strings.Contains(flatten(hc.Test), "/readyz") {
		t.Errorf("d6a healthcheck %v does not probe /readyz", hc.Test)
	}
	if hc := c.Services["nats"].Healthcheck; hc != nil && !strings.Contains(flatten(hc.Test), "/healthz") {
		t.Errorf("nats healthcheck %v does not probe /healthz", hc.Test)
	}
	if cmd := flatten(c.Services["nats"].Command); !strings.Contains(cmd, "-js") {
		t.Errorf("nats command %q does not enable JetStream", cmd)
	}
}

func TestComposeD6aWiring(t *testing.T) {
	d, ok := loadCompose(t).Services["d6a"]
	if !ok {
		t.Fatal("service d6a missing")
	}
	if d.Build == nil {
		t.Error("d6a is not built from the repository (build: .)")
	}
	var unknown []string
	for k := range d.Environment {
		if !contractVars[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("d6a environment names variables outside CONTRACT §2: %v", unknown)
	}
	if got := d.Environment["D6A_NATS_URL"]; got != "nats://nats:4222" {
		t.Errorf("D6A_NATS_URL = %q, want nats://nats:4222", got)
	}
	if got := d.Environment["D6A_DATABASE_URL"]; !strings.Contains(got, "@postgres:5432/") {
		t.Errorf("D6A_DATABASE_URL = %q does not point at the postgres service", got)
	}
	// depends_on, long form: each dependency waits for service_healthy.
	var deps map[string]struct {
		Condition string `yaml:"condition"`
	}
	if err := d.DependsOn.Decode(&deps); err != nil {
		t.Fatalf("d6a depends_on is not the long form with conditions: %v", err)
	}
	for _, name := range []string{"nats", "postgres"} {
		if deps[name].Condition != "service_healthy" {
			t.Errorf("d6a depends_on %s: condition %q, want service_healthy", name, deps[name].Condition)
		}
	}
	published := false
	for _, p := range d.Ports {
		if strings.HasSuffix(p, ":8080") || p == "8080" {
			published = true
		}
	}
	if !published {
		t.Errorf("d6a ports %v do not publish 8080", d.Ports)
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
