package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// mensagem is the part of govulncheck's JSON stream the gate reads.
type mensagem struct {
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
			Receiver string `json:"receiver"`
		} `json:"trace"`
	} `json:"finding"`
}

type achado struct {
	id, modulo, versao, fix, onde string
}

// julgamento prints the called vulnerabilities of the scan on r and returns
// the exit status: 0 when none is left once the standard library's fixed
// by gomod's toolchain are set aside, 1 otherwise, 2 on bad input.
func julgamento(gomod string, r io.Reader, w io.Writer) int {
	b, err := os.ReadFile(gomod)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	mf, err := modfile.Parse(gomod, b, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	toolchain := ""
	if mf.Toolchain != nil {
		toolchain = "v" + strings.TrimPrefix(mf.Toolchain.Name, "go")
	}
	resumos := map[string]string{}
	achados := map[string]achado{}
	dec := json.NewDecoder(r)
	for {
		var m mensagem
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "govulncheck output:", err)
			return 2
		}
		if m.OSV != nil {
			resumos[m.OSV.ID] = m.OSV.Summary
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue // only imported or required, not called
		}
		t := f.Trace[0]
		onde := t.Package + "." + t.Function
		if t.Receiver != "" {
			onde = t.Package + "." + strings.TrimPrefix(t.Receiver, "*") + "." + t.Function
		}
		achados[f.OSV+" "+t.Module] = achado{id: f.OSV, modulo: t.Module, versao: t.Version, fix: f.FixedVersion, onde: onde}
	}
	chaves := make([]string, 0, len(achados))
	for k := range achados {
		chaves = append(chaves, k)
	}
	sort.Strings(chaves)
	falhas := 0
	for _, k := range chaves {
		a := achados[k]
		veredito := "FAIL"
		if a.modulo == "stdlib" && a.fix != "" && toolchain != "" && semver.Compare(a.fix, toolchain) <= 0 {
			veredito = "release toolchain " + mf.Toolchain.Name + " has the fix"
		} else {
			falhas++
		}
		fix := a.fix
		if fix == "" {
			fix = "none"
		}
		fmt.Fprintf(w, "%s %s@%s (fixed in %s), called: %s — %s: %s\n", a.id, a.modulo, a.versao, fix, a.onde, veredito, resumos[a.id])
	}
	fmt.Fprintf(w, "vulncheck: %d called vulnerabilities, %d not fixed by the release toolchain\n", len(achados), falhas)
	if falhas > 0 {
		return 1
	}
	return 0
}
