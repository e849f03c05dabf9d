package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// serie is one line of a panel.
type serie struct {
	nome     string
	cor      string
	tracejar bool
	ys       []float64
}

// desenharSVG plots, for the analyzed runs of the sparse shape against K
// (log scale), the light pass's p50 and p99 and the paced pass's p99 with
// the 10 ms target, and the burst's draw rate with pgbench's tps: two
// panels, plain SVG, no dependencies.
func desenharSVG(todos []resultadoK, carga float64) string {
	var rs []resultadoK
	for _, r := range todos {
		if r.Forma == "sparse" && !r.Fresco {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		rs = todos
	}
	const (
		largura, altura = 960, 440
		painelL         = 430
		topo, base      = 50, 330
	)
	ks := make([]float64, len(rs))
	serieDe := func(f func(resultadoK) float64) []float64 {
		ys := make([]float64, len(rs))
		for i, r := range rs {
			ks[i], ys[i] = float64(r.K), f(r)
		}
		return ys
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", largura, altura, largura, altura)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" text-anchor="middle" font-size="15" font-weight="bold">d6a serve at national scale: draws against K counsellors (sparse shape, 255,598 UCs)</text>`+"\n", largura/2)
	painel(&b, 60, topo, painelL-80, base-topo, ks,
		"publish → result on the bus (ms)", []serie{
			{nome: "p50, light load", cor: "#1f77b4", ys: serieDe(func(r resultadoK) float64 { return ms(r.Leve.Lat.P50) })},
			{nome: "p99, light load", cor: "#d62728", ys: serieDe(func(r resultadoK) float64 { return ms(r.Leve.Lat.P99) })},
			{nome: fmt.Sprintf("p99 at %.0f%% of the burst's rate", carga*100), cor: "#9467bd", tracejar: true, ys: serieDe(func(r resultadoK) float64 { return ms(r.Ritmada.Lat.P99) })},
		}, 10, "p99 target 10 ms")
	painel(&b, painelL+90, topo, painelL-80, base-topo, ks,
		"throughput (per second)", []serie{
			{nome: "draws/s (burst)", cor: "#2ca02c", ys: serieDe(func(r resultadoK) float64 { return r.Maxima.Vazao() })},
			{nome: fmt.Sprintf("offered in the %.0f%% pass", carga*100), cor: "#ff7f0e", tracejar: true, ys: serieDe(func(r resultadoK) float64 { return r.Ritmada.TaxaOfertada })},
			{nome: "pgbench tps (1 client, -N)", cor: "#7f7f7f", tracejar: true, ys: serieDe(func(r resultadoK) float64 { return r.PgbenchTPS })},
		}, 0, "")
	b.WriteString("</svg>\n")
	return b.String()
}

func painel(b *strings.Builder, x0, y0, w, h int, ks []float64, titulo string, ss []serie, alvo float64, rotuloAlvo string) {
	ymax := alvo
	for _, s := range ss {
		for _, y := range s.ys {
			ymax = math.Max(ymax, y)
		}
	}
	passo := passoBonito(ymax * 1.1 / 5)
	ytopo := passo * math.Ceil(ymax*1.1/passo)
	if ytopo <= 0 {
		ytopo = 1
	}
	lmin, lmax := math.Log10(slices.Min(ks))-0.25, math.Log10(slices.Max(ks))+0.25
	px := func(k float64) float64 { return float64(x0) + (math.Log10(k)-lmin)/(lmax-lmin)*float64(w) }
	py := func(y float64) float64 { return float64(y0+h) - y/ytopo*float64(h) }

	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+w/2, y0-12, esc(titulo))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", x0, y0, w, h)
	for y := 0.0; y <= ytopo+passo/2; y += passo {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", x0, x0+w, py(y), py(y))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", x0-6, py(y), numero(y))
	}
	for _, k := range ks {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e5e5e5"/>`+"\n", px(k), px(k), y0, y0+h)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(k), y0+h+16, rotuloCurto(k))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">K counsellors (log scale)</text>`+"\n", x0+w/2, y0+h+34)
	if alvo > 0 {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="2,4"/>`+"\n", x0, x0+w, py(alvo), py(alvo))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#d62728" font-size="11">%s</text>`+"\n", x0+w-4, py(alvo)-4, esc(rotuloAlvo))
	}
	for i, s := range ss {
		var pts []string
		for j, y := range s.ys {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(ks[j]), py(y)))
		}
		traco := se(s.tracejar, ` stroke-dasharray="6,4"`, "")
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), s.cor, traco)
		desloc := se(i%2 == 1, 15.0, -7.0) // value labels above the points, every other series below
		for j, y := range s.ys {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", px(ks[j]), py(y), s.cor)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="%s">%s</text>`+"\n", px(ks[j]), py(y)+desloc, s.cor, numero(y))
		}
		ly, lx := y0+h+54+16*i, x0+10 // legend
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", lx, lx+18, ly, ly, s.cor, traco)
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle" font-size="11">%s</text>`+"\n", lx+22, ly, esc(s.nome))
	}
}

func passoBonito(bruto float64) float64 {
	if bruto <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(bruto)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= bruto {
			return m * e
		}
	}
	return 10 * e
}

func numero(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

func rotuloCurto(k float64) string {
	switch {
	case k >= 1e6 && math.Mod(k, 1e6) == 0:
		return fmt.Sprintf("%.0fM", k/1e6)
	case k >= 1e3 && math.Mod(k, 1e3) == 0:
		return fmt.Sprintf("%.0fk", k/1e3)
	}
	return fmt.Sprintf("%.0f", k)
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
