// Command vulndb builds, without the network, the vulnerability database
// `make vulncheck` hands to govulncheck (-db file://DIR). The Go module
// proxy serves golang.org/x/vulndb, whose data/osv holds every OSV entry of
// the Go vulnerability database; this writes them in the v1 layout
// govulncheck reads from a directory:
//
//	DIR/index/db.json       {"modified": …}
//	DIR/index/modules.json  [{"path": …, "vulns": [{"id", "modified", "fixed"}]}]
//	DIR/index/vulns.json    [{"id", "modified", "aliases"}]
//	DIR/ID/GO-….json        the OSV entries, byte for byte
//
//	go run ./cmd/vulndb -vulndb v0.0.0-20261105234957-e22db6528018 -out bin/vulndb
//
// The module is fetched with `go mod download` (the proxy, or the module
// cache). Its OSV files carry no modification time (upstream takes it from
// git history), so the database's time is the pseudo-version's commit time.
// It is the same index x/vulndb's cmd/indexdb writes; that command pulls in
// Google Cloud and go-git (minutes of downloads), this needs nothing new.
//
// With -julgar GOMOD it reads `govulncheck -format json` on stdin and
// decides: it prints every vulnerability the scanned code calls and fails
// on any of them, except one of the standard library fixed at or below the
// toolchain go.mod names (`toolchain goX.Y.Z`): the release build
// (Dockerfile, GOTOOLCHAIN=auto) uses that toolchain or newer, so there the
// fix is in; the scan, run by an older local toolchain, still reports it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

const modulo = "golang.org/x/vulndb"

// entrada is the part of an OSV entry the index needs.
type entrada struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases"`
	Affected []struct {
		Module struct {
			Path string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced string `json:"introduced"`
				Fixed      string `json:"fixed"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

type vulnModulo struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type metaModulo struct {
	Path  string       `json:"path"`
	Vulns []vulnModulo `json:"vulns"`
}

type metaVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

func main() {
	versao := flag.String("vulndb", "", "version of "+modulo+" (a pseudo-version)")
	osvDir := flag.String("osv", "", "read the OSV files from this directory instead of the module")
	out := flag.String("out", "", "directory to write the database to (replaced)")
	julgar := flag.String("julgar", "", "go.mod: judge govulncheck -format json on stdin against its toolchain line")
	flag.Parse()
	if *julgar != "" {
		os.Exit(julgamento(*julgar, os.Stdin, os.Stdout))
	}
	if *out == "" || (*versao == "") == (*osvDir == "") {
		log.Fatal("usage: vulndb (-vulndb VERSION | -osv DIR) -out DIR")
	}
	var quando time.Time
	dir := *osvDir
	if *versao != "" {
		var err error
		if quando, err = module.PseudoVersionTime(*versao); err != nil {
			log.Fatalf("%s@%s: %v", modulo, *versao, err)
		}
		if dir, err = baixar(*versao); err != nil {
			log.Fatal(err)
		}
		dir = filepath.Join(dir, "data", "osv")
	}
	n, err := escrever(dir, *out, quando)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "vulndb: %d entries from %s in %s\n", n, dir, *out)
}

// baixar fetches the module and returns its directory in the module cache.
func baixar(versao string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modulo+"@"+versao)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", modulo, versao, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("go mod download: %w", err)
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", modulo, versao, m.Error)
	}
	return m.Dir, nil
}

// escrever writes the v1 database of the OSV files in dir to out; quando,
// when not zero, stands for entries without a modification time.
func escrever(dir, out string, quando time.Time) (int, error) {
	nomes, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(nomes) == 0 {
		return 0, fmt.Errorf("no OSV files in %s", dir)
	}
	if err := os.RemoveAll(out); err != nil {
		return 0, err
	}
	for _, d := range []string{"ID", "index"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return 0, err
		}
	}
	var (
		db      struct{ Modified time.Time }
		modulos = map[string]*metaModulo{}
		vulns   []metaVuln
	)
	sort.Strings(nomes)
	for _, nome := range nomes {
		b, err := os.ReadFile(nome)
		if err != nil {
			return 0, err
		}
		var e entrada
		if err := json.Unmarshal(b, &e); err != nil {
			return 0, fmt.Errorf("%s: %w", nome, err)
		}
		if filepath.Base(nome) != e.ID+".json" || strings.ContainsAny(e.ID, `/\`) {
			return 0, fmt.Errorf("%s: entry id %q does not match the file name", nome, e.ID)
		}
		if e.Modified.IsZero() {
			e.Modified = quando
		}
		if e.Modified.After(db.Modified) {
			db.Modified = e.Modified
		}
		vulns = append(vulns, metaVuln{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modulos[a.Module.Path]
			if m == nil {
				m = &metaModulo{Path: a.Module.Path, Vulns: []vulnModulo{}}
				modulos[a.Module.Path] = m
			}
			fix := ""
			for _, r := range a.Ranges {
				if r.Type != "SEMVER" {
					continue
				}
				// x/vuln's NonSupersededFix: the latest fix, unless the
				// vulnerability is introduced again after it.
				for _, ev := range r.Events {
					if ev.Fixed != "" && menor(fix, ev.Fixed) {
						fix = ev.Fixed
					}
				}
				for _, ev := range r.Events {
					if ev.Introduced != "" && ev.Introduced != "0" && menor(fix, ev.Introduced) {
						fix = ""
						break
					}
				}
			}
			m.Vulns = append(m.Vulns, vulnModulo{ID: e.ID, Modified: e.Modified, Fixed: fix})
		}
		// The entry as published; b is its exact bytes.
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), b, 0o644); err != nil {
			return 0, err
		}
	}
	lista := make([]*metaModulo, 0, len(modulos))
	for _, m := range modulos {
		sort.SliceStable(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		lista = append(lista, m)
	}
	sort.Slice(lista, func(i, j int) bool { return lista[i].Path < lista[j].Path })
	for nome, v := range map[string]any{
		"db.json":      map[string]time.Time{"modified": db.Modified},
		"modules.json": lista,
		"vulns.json":   vulns,
	} {
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(v); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(out, "index", nome), bytes.TrimSpace(buf.Bytes()), 0o644); err != nil {
			return 0, err
		}
	}
	return len(nomes), nil
}

// menor is x/vuln's semver.Less on OSV versions (no "v" prefix); "" is
// below every version.
func menor(a, b string) bool {
	return semver.Compare(comV(a), comV(b)) < 0
}

func comV(s string) string {
	if s == "" {
		return ""
	}
	return "v" + s
}
