package main

import (
	"context"
	"fmt"
	"io"

	"github.com/formigueiro/d6a/internal/verificar/log"
)

// monitorar is `d6a verify --url BASE --monitorar DIR` (CONTRACT §7
// "Monitor"): exit 0 with the monitor's line when the new records follow,
// 1 naming the fork, the failing record or the first divergence (DIR then
// left as it was).
func monitorar(ctx context.Context, c *log.Cliente, dir, beaconChave string, stdout, stderr io.Writer) int {
	progresso, fim := barra(stderr, "monitor")
	res, err := c.Monitorar(ctx, dir, progresso)
	fim()
	if code := falhou(stderr, err); code != 0 {
		return code
	}
	rp := res.Replay
	if res.PrimeiraVez {
		fmt.Fprintf(stdout, "monitor: primeira execução: o log inteiro verificado e reproduzido; estado guardado em %s\n", dir)
	}
	if c.Barramento == nil {
		fmt.Fprintln(stdout, "gatilhos: não conferidos (sem D6A_NATS_URL)")
		fmt.Fprintln(stdout, "entradas: não conferidas contra o barramento (sem D6A_NATS_URL)")
	} else if res.Barramento {
		fmt.Fprintf(stdout, "entradas: mensagens=%d registradas=%d sem_efeito=%d mortas=%d invalidas=%d adiante=%d\n",
			rp.Mensagens, rp.Registradas, rp.SemEfeito, rp.Mortas, rp.Invalidas, rp.Adiante)
	} else if !res.PrimeiraVez && res.SemIDsDeEntradas {
		fmt.Fprintf(stdout, "entradas: não conferidas contra o barramento (o estado em %s começou sem D6A_NATS_URL; para conferi-las, recomece com um DIR vazio)\n", dir)
	}
	if res.Eliminados > 0 {
		fmt.Fprintf(stdout, "eliminados=%d (registros apagados: o replay nada prova sobre o que nomeavam)\n", res.Eliminados)
	}
	fmt.Fprintln(stdout, res.ResumoReplay.Linha())
	fmt.Fprintln(stdout, res.Linha())
	code := linhaBeacon(stdout, stderr, rp.Regras(), beaconChave)
	if len(rp.Divergencias) > 0 {
		fmt.Fprintf(stderr, "d6a verify: DIVERGÊNCIA %s\n", limpo(rp.Divergencias[0]))
		code = 1
	}
	if res.Resumo.Primeira != nil {
		fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(res.Resumo.Primeira))
		code = 1
	}
	if code != 0 {
		fmt.Fprintf(stderr, "d6a verify: estado em %s mantido como estava (checkpoint de tamanho %d)\n", dir, res.De)
	}
	return code
}

// espelhar is `d6a verify --url BASE --espelhar DIR`: the checkpoint and
// the tiles copied into DIR, then the copy verified from DIR alone.
func espelhar(ctx context.Context, c *log.Cliente, dir string, stdout, stderr io.Writer) int {
	progresso, fim := barra(stderr, "espelho")
	e, err := c.Espelhar(ctx, dir, progresso)
	fim()
	if code := falhou(stderr, err); code != 0 {
		return code
	}
	fmt.Fprintf(stdout, "espelho: tamanho=%d tiles=%d copiados=%d dir=%s\n", e.Checkpoint.Tamanho, e.Tiles, e.Copiados, dir)
	local := &log.Cliente{Base: dir, Chave: c.Chave, Avisos: stderr}
	res, cp, err := local.VerificarTudo(ctx, nil)
	if code := falhou(stderr, err); code != 0 {
		return code
	}
	if cp.Tamanho != e.Checkpoint.Tamanho || cp.Raiz != e.Checkpoint.Raiz {
		fmt.Fprintf(stderr, "d6a verify: FALHA espelho: checkpoint copiado de tamanho %d, esperado %d\n", cp.Tamanho, e.Checkpoint.Tamanho)
		return 1
	}
	fmt.Fprintf(stdout, "espelho verificado: %s\n", res.Linha())
	if res.Primeira != nil {
		fmt.Fprintf(stderr, "d6a verify: FALHA %s\n", limpo(res.Primeira))
		return 1
	}
	return 0
}
