// Package apispec holds what the service answers and publishes to its own
// machine-readable documents (CONTRACT §9): the OpenAPI document of the HTTP
// routes and the AsyncAPI document of the bus, both from package schemas.
// Tests call it on every exchange they make, so a document that drifts from
// the code fails them.
package apispec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/formigueiro/d6a/schemas"
)

func init() {
	// The page, its loader and the metrics are text, its WebAssembly bytes;
	// openapi3filter knows text/plain and application/octet-stream only.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/wasm", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/openmetrics-text", openapi3filter.PlainBodyDecoder)
}

type openapiDoc struct {
	doc    *openapi3.T
	router routers.Router
}

var carregarOpenAPI = sync.OnceValues(func() (*openapiDoc, error) {
	data, err := schemas.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("apispec: loading openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("apispec: openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apispec: routing openapi.yaml: %w", err)
	}
	return &openapiDoc{doc: doc, router: r}, nil
})

// OpenAPI returns the loaded and validated OpenAPI document.
func OpenAPI() (*openapi3.T, error) {
	d, err := carregarOpenAPI()
	if err != nil {
		return nil, err
	}
	return d.doc, nil
}

// Operation is one method and path of the OpenAPI document, the path in
// OpenAPI form (/d6a/admin/fila/{demanda_id}/sortear).
type Operation struct{ Method, Path string }

func (o Operation) String() string { return o.Method + " " + o.Path }

// Operations lists every operation the OpenAPI document describes, sorted.
func Operations() ([]Operation, error) {
	doc, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	var out []Operation
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, Operation{Method: strings.ToUpper(method), Path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// CheckHTTP checks one exchange against the OpenAPI document. A request the
// document describes must get a response of a status the operation lists,
// with a body of that response's schema. A request the document rejects (a
// malformed id, a missing parameter, a body of the wrong shape) must get a
// 4xx that the operation lists. A request to no described route must get
// 404 or 405 as {"erro"}. HEAD is checked as the GET it mirrors, without a
// body.
func CheckHTTP(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	d, err := carregarOpenAPI()
	if err != nil {
		return err
	}
	r := req.Clone(context.Background())
	if r.Method == http.MethodHead {
		r.Method = http.MethodGet
	}
	// The document's server is "/": routes match on the path, whatever the
	// host the test reached.
	u := *r.URL
	u.Scheme, u.Host = "", ""
	r.URL = &u
	r.Body = http.NoBody
	if reqBody != nil {
		r.Body = readCloser(reqBody)
	}
	route, params, err := d.router.FindRoute(r)
	if err != nil {
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s %s: not in openapi.yaml (%v), but answered %d", req.Method, req.URL.Path, err, status)
		}
		var e struct {
			Erro string `json:"erro"`
		}
		if req.Method != http.MethodHead && (json.Unmarshal(body, &e) != nil || e.Erro == "") {
			return fmt.Errorf("%s %s: %d without an {\"erro\"} body: %s", req.Method, req.URL.Path, status, body)
		}
		return nil
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if route.Operation.Responses.Status(status) == nil && status != http.StatusNotModified {
		return fmt.Errorf("%s %s: answered %d, a status openapi.yaml does not list for %s %s", req.Method, req.URL.RequestURI(), status, route.Method, route.Path)
	}
	if reqErr != nil && (status < 400 || status > 499) {
		return fmt.Errorf("%s %s: openapi.yaml rejects the request (%v) but it was answered %d", req.Method, req.URL.RequestURI(), reqErr, status)
	}
	if req.Method == http.MethodHead {
		return nil
	}
	res := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	res.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), res); err != nil {
		return fmt.Errorf("%s %s: answer %d does not match openapi.yaml: %w\nbody: %s", req.Method, req.URL.RequestURI(), status, err, truncate(body))
	}
	return nil
}

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// AsyncAPI is the AsyncAPI document as the service serves it (bundled),
// decoded.
type AsyncAPI struct {
	Raw      map[string]any
	Channels map[string]Channel // by channel id
}

// Channel is one channel of the AsyncAPI document with the operations on it.
type Channel struct {
	ID      string
	Address string
	// Send and Receive list the operations' ids by action.
	Send, Receive []string
	// SendMessages and ReceiveMessages are the local references of the
	// messages the send and the receive operations name.
	SendMessages, ReceiveMessages []string
}

var carregarAsyncAPI = sync.OnceValues(func() (*asyncapiDoc, error) {
	data, err := schemas.AsyncAPIJSON()
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	doc := &AsyncAPI{Raw: raw, Channels: map[string]Channel{}}
	chans, _ := raw["channels"].(map[string]any)
	for id, v := range chans {
		c, _ := v.(map[string]any)
		addr, _ := c["address"].(string)
		doc.Channels[id] = Channel{ID: id, Address: addr}
	}
	ops, _ := raw["operations"].(map[string]any)
	for id, v := range ops {
		op, _ := v.(map[string]any)
		ch, _ := op["channel"].(map[string]any)
		ref, _ := ch["$ref"].(string)
		cid, ok := strings.CutPrefix(ref, "#/channels/")
		c, exists := doc.Channels[cid]
		if !ok || !exists {
			return nil, fmt.Errorf("apispec: operation %s names channel %q, which asyncapi.yaml lacks", id, ref)
		}
		var msgs []string
		if l, ok := op["messages"].([]any); ok {
			for _, m := range l {
				r, _ := m.(map[string]any)["$ref"].(string)
				msgs = append(msgs, r)
			}
		} else {
			cm, _ := chans[cid].(map[string]any)["messages"].(map[string]any)
			for name := range cm {
				msgs = append(msgs, "#/channels/"+cid+"/messages/"+name)
			}
		}
		switch op["action"] {
		case "send":
			c.Send = append(c.Send, id)
			c.SendMessages = append(c.SendMessages, msgs...)
		case "receive":
			c.Receive = append(c.Receive, id)
			c.ReceiveMessages = append(c.ReceiveMessages, msgs...)
		default:
			return nil, fmt.Errorf("apispec: operation %s has action %v", id, op["action"])
		}
		doc.Channels[cid] = c
	}
	// Compile the payload of every message a send operation names.
	comp := jsonschema.NewCompiler()
	comp.Draft = jsonschema.Draft2020
	const url = "mem:///asyncapi.json"
	if err := comp.AddResource(url, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	a := &asyncapiDoc{doc: doc, payloads: map[string][]*jsonschema.Schema{}, recebidos: map[string][]*jsonschema.Schema{},
		cabecalhos: map[string][]*jsonschema.Schema{}}
	// compilar compiles the payloads of msgs into em and, when cab is not
	// nil, their headers into cab.
	compilar := func(c Channel, msgs []string, em, cab map[string][]*jsonschema.Schema) error {
		for _, m := range msgs {
			obj, ptr, err := resolve(raw, m)
			if err != nil {
				return fmt.Errorf("apispec: channel %s: %w", c.ID, err)
			}
			if _, ok := obj["payload"]; !ok {
				return fmt.Errorf("apispec: channel %s: message %s has no payload", c.ID, m)
			}
			s, err := comp.Compile(url + ptr + "/payload")
			if err != nil {
				return fmt.Errorf("apispec: channel %s: compiling the payload of %s: %w", c.ID, ptr, err)
			}
			em[c.Address] = append(em[c.Address], s)
			if _, ok := obj["headers"]; ok && cab != nil {
				h, err := comp.Compile(url + ptr + "/headers")
				if err != nil {
					return fmt.Errorf("apispec: channel %s: compiling the headers of %s: %w", c.ID, ptr, err)
				}
				cab[c.Address] = append(cab[c.Address], h)
			}
		}
		return nil
	}
	for _, c := range doc.Channels {
		if err := compilar(c, c.SendMessages, a.payloads, a.cabecalhos); err != nil {
			return nil, err
		}
		if err := compilar(c, c.ReceiveMessages, a.recebidos, nil); err != nil {
			return nil, err
		}
	}
	return a, nil
})

type asyncapiDoc struct {
	doc *AsyncAPI
	// payloads are the compiled payload schemas of the send operations'
	// messages, by channel address.
	payloads map[string][]*jsonschema.Schema
	// recebidos, the same for the receive operations.
	recebidos map[string][]*jsonschema.Schema
	// cabecalhos are the compiled headers schemas of the send operations'
	// messages, by channel address.
	cabecalhos map[string][]*jsonschema.Schema
}

// resolve follows a local reference ("#/a/b") through $refs to an object,
// returning it and the pointer of where it really is.
func resolve(raw map[string]any, ref string) (map[string]any, string, error) {
	for range 10 {
		ptr, ok := strings.CutPrefix(ref, "#")
		if !ok {
			return nil, "", fmt.Errorf("reference %q is not local", ref)
		}
		var cur any = raw
		for _, p := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, "", fmt.Errorf("reference %q does not resolve", ref)
			}
			if cur, ok = m[p]; !ok {
				return nil, "", fmt.Errorf("reference %q does not resolve", ref)
			}
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("reference %q is not an object", ref)
		}
		next, isRef := obj["$ref"].(string)
		if !isRef {
			return obj, "#" + ptr, nil
		}
		ref = next
	}
	return nil, "", fmt.Errorf("reference %q: too many hops", ref)
}

// LoadAsyncAPI returns the decoded AsyncAPI document, its channels and
// operations.
func LoadAsyncAPI() (*AsyncAPI, error) {
	a, err := carregarAsyncAPI()
	if err != nil {
		return nil, err
	}
	return a.doc, nil
}

// ErrNoChannel is returned by CheckPublished for a subject that no channel
// with a send operation has.
var ErrNoChannel = errors.New("no channel of asyncapi.yaml with a send operation has this address")

// CheckPublished checks a message the service published on subject: its
// channel must have a send operation, and data must be valid against the
// payload of one of the messages that operation sends.
func CheckPublished(subject string, data []byte) error {
	a, err := carregarAsyncAPI()
	if err != nil {
		return err
	}
	ss, ok := a.payloads[subject]
	if !ok {
		return fmt.Errorf("%s: %w", subject, ErrNoChannel)
	}
	return validar(subject, ss, data)
}

// CheckPublishedHeaders checks the NATS headers (first value of each) of a
// message the service published on subject against the headers schema of
// one of the messages the channel's send operation sends.
func CheckPublishedHeaders(subject string, header map[string]string) error {
	a, err := carregarAsyncAPI()
	if err != nil {
		return err
	}
	ss, ok := a.cabecalhos[subject]
	if !ok {
		return fmt.Errorf("%s: %w", subject, ErrNoChannel)
	}
	h := make(map[string]any, len(header))
	for k, v := range header {
		h[k] = v
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return validar(subject, ss, b)
}

// CheckReceived checks a message on subject that the service consumed and
// used (not a dead letter): data must be valid against the payload of one
// of the messages of the channel's receive operation, so the document is
// no stricter than the code. ok is false when no channel receives subject.
func CheckReceived(subject string, data []byte) (ok bool, err error) {
	a, err := carregarAsyncAPI()
	if err != nil {
		return false, err
	}
	ss, ok := a.recebidos[subject]
	if !ok {
		return false, nil
	}
	return true, validar(subject, ss, data)
}

func validar(subject string, ss []*jsonschema.Schema, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s: not JSON: %w", subject, err)
	}
	var errs []string
	for _, s := range ss {
		err := s.Validate(v)
		if err == nil {
			return nil
		}
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			errs = append(errs, fmt.Sprintf("%#v", ve))
		} else {
			errs = append(errs, err.Error())
		}
	}
	return fmt.Errorf("%s: the envelope matches no payload of its channel's operation in asyncapi.yaml: %s", subject, strings.Join(errs, "; "))
}
