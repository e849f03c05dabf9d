package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/httpapi"
)

// cmdToken signs a development session token with D6A_JWT_SECRET, so the
// situacao route can be tried without the identity provider:
//
//	TOKEN=$(d6a token --sub 0b6f…)
//	curl -H "Authorization: Bearer $TOKEN" localhost:8080/d6a/conselheiros/me/situacao
//
// The issuer and audience default to D6A_JWT_ISSUER and D6A_JWT_AUDIENCE, so
// the token passes the server started with the same environment.
func cmdToken(args []string) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sub := fs.String("sub", "", "cidadao_id the token speaks for (UUID, required)")
	ttl := fs.Duration("ttl", time.Hour, "lifetime of the token")
	iss := fs.String("iss", "", "iss claim (default D6A_JWT_ISSUER)")
	aud := fs.String("aud", "", "aud claim (default D6A_JWT_AUDIENCE)")
	papel := fs.String("papel", "", `"papel" claim: admin for an operator's token (d6a admin)`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("usage: d6a token --sub UUID [--ttl 1h] [--iss ISSUER] [--aud AUDIENCE] [--papel admin]")
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(os.Stderr, "d6a token: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "d6a token: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	id, err := uuid.Parse(*sub)
	if *sub == "" || err != nil || len(*sub) != 36 {
		fmt.Fprintln(os.Stderr, "d6a token: --sub must be the citizen's UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
		return exitUsage
	}
	if *ttl <= 0 {
		fmt.Fprintln(os.Stderr, "d6a token: --ttl must be positive")
		return exitUsage
	}
	cfg, ok := loadConfig()
	if !ok {
		return exitUsage
	}
	if cfg.JWTSecret == "" {
		fmt.Fprintln(os.Stderr, "d6a token: D6A_JWT_SECRET is not set (only HS256 development tokens can be signed here)")
		return exitUsage
	}
	if *iss == "" {
		*iss = cfg.JWTIssuer
	}
	if *aud == "" {
		*aud = cfg.JWTAudience
	}
	tok, err := httpapi.TokenComPapel(cfg.JWTSecret, id.String(), *papel, time.Now(), *ttl, *iss, *aud)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a token: %v\n", err)
		return 1
	}
	fmt.Println(tok)
	return 0
}
