// go-oracle: answers, for JSON cases on stdin (one per line), what ESO v0.16.2's template engine v2
// gives (text/template with missingkey=error, ESO's function map: its own functions, copied verbatim
// from its pkg/template/v2 into eso_*.go, plus Sprig's TxtFuncMap from ESO's Sprig fork minus env and
// expandenv, exactly as its template.go registers them) and what Go's regexp gives. One JSON answer per
// line on stdout, in order. ESO's package is copied rather than imported: importing it pulls in
// controller-runtime and client-go, minutes of compiling on 2 cores for the fast tier.
package main

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"regexp"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	gopkcs12 "software.sslmate.com/src/go-pkcs12"
)

type request struct {
	// "template": Template + Data; "regexp": Regexp + Input + Replacement (ReplaceAllString),
	// "regexpLiteral": ReplaceAllLiteralString.
	Kind     string            `json:"kind"`
	Template string            `json:"template,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	// DataB64: data values as base64 (binary secrets); Name: the template's name (ESO: the data key).
	DataB64 map[string]string `json:"dataB64,omitempty"`
	Name    string            `json:"name,omitempty"`
	// "pkcs12": Encoder (Legacy, LegacyRC2, LegacyDES, Modern, Modern2023, Passwordless) of go-pkcs12
	// encodes CertPEM (first block the leaf, the rest CA certs), KeyPEM and Password; output base64.
	Encoder     string `json:"encoder,omitempty"`
	CertPEM     string `json:"certPem,omitempty"`
	KeyPEM      string `json:"keyPem,omitempty"`
	Password    string `json:"password,omitempty"`
	Regexp      string `json:"regexp,omitempty"`
	Input       string `json:"input,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

type response struct {
	Output *string `json:"output,omitempty"`
	// OutputB64: the output's bytes (Output is not byte-exact for invalid UTF-8).
	OutputB64 *string `json:"outputB64,omitempty"`
	// "parse", "exec", "panic" (a function panicked: text/template recovers it into an exec error
	// for funcs), "compile" (regexp), or "" on success.
	ErrorClass string `json:"errorClass,omitempty"`
	Error      string `json:"error,omitempty"`
}

// tplFuncs and init() below are ESO's pkg/template/v2/template.go, copied (the delimiter flags left out).
const (
	errParse                = "unable to parse template at key %s: %s"
	errExecute              = "unable to execute template at key %s: %s"
	errDecodePKCS12WithPass = "unable to decode pkcs12 with password: %s"
	errDecodeCertWithPass   = "unable to decode pkcs12 certificate with password: %s"
	errParsePrivKey         = "unable to parse private key type"

	pemTypeCertificate = "CERTIFICATE"
	pemTypeKey         = "PRIVATE KEY"
)

var tplFuncs = template.FuncMap{
	"pkcs12key":      pkcs12key,
	"pkcs12keyPass":  pkcs12keyPass,
	"pkcs12cert":     pkcs12cert,
	"pkcs12certPass": pkcs12certPass,

	"pemToPkcs12":         pemToPkcs12,
	"pemToPkcs12Pass":     pemToPkcs12Pass,
	"fullPemToPkcs12":     fullPemToPkcs12,
	"fullPemToPkcs12Pass": fullPemToPkcs12Pass,

	"filterPEM":       filterPEM,
	"filterCertChain": filterCertChain,

	"jwkPublicKeyPem":  jwkPublicKeyPem,
	"jwkPrivateKeyPem": jwkPrivateKeyPem,

	"toYaml":   toYAML,
	"fromYaml": fromYAML,
}

func init() {
	sprigFuncs := sprig.TxtFuncMap()
	delete(sprigFuncs, "env")
	delete(sprigFuncs, "expandenv")

	for k, v := range sprigFuncs {
		tplFuncs[k] = v
	}
}

func runTemplate(r request) (resp response) {
	defer func() {
		if p := recover(); p != nil {
			resp = response{ErrorClass: "panic", Error: fmt.Sprint(p)}
		}
	}()
	name := r.Name
	if name == "" {
		name = "template"
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(tplFuncs).Delims("{{", "}}").Parse(r.Template)
	if err != nil {
		return response{ErrorClass: "parse", Error: err.Error()}
	}
	var buf bytes.Buffer
	data := map[string]string{}
	for k, v := range r.Data {
		data[k] = v
	}
	for k, v := range r.DataB64 {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return response{ErrorClass: "request", Error: err.Error()}
		}
		data[k] = string(b)
	}
	if err := t.Execute(&buf, data); err != nil {
		return response{ErrorClass: "exec", Error: err.Error()}
	}
	out := buf.String()
	b64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	return response{Output: &out, OutputB64: &b64}
}

func runPkcs12(r request) response {
	enc := map[string]*gopkcs12.Encoder{"Legacy": gopkcs12.Legacy, "LegacyRC2": gopkcs12.LegacyRC2, "LegacyDES": gopkcs12.LegacyDES, "Modern": gopkcs12.Modern, "Modern2023": gopkcs12.Modern2023, "Passwordless": gopkcs12.Passwordless}[r.Encoder]
	if enc == nil {
		return response{ErrorClass: "request", Error: "unknown encoder"}
	}
	var certs []*x509.Certificate
	rest := []byte(r.CertPEM)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return response{ErrorClass: "request", Error: err.Error()}
		}
		certs = append(certs, c)
	}
	kb, _ := pem.Decode([]byte(r.KeyPEM))
	if kb == nil || len(certs) == 0 {
		return response{ErrorClass: "request", Error: "need a certificate and a key"}
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return response{ErrorClass: "request", Error: err.Error()}
	}
	pfx, err := enc.Encode(key, certs[0], certs[1:], r.Password)
	if err != nil {
		return response{ErrorClass: "request", Error: err.Error()}
	}
	out := base64.StdEncoding.EncodeToString(pfx)
	return response{Output: &out}
}

func runRegexp(r request) response {
	re, err := regexp.Compile(r.Regexp)
	if err != nil {
		return response{ErrorClass: "compile", Error: err.Error()}
	}
	var out string
	switch r.Kind {
	case "regexpLiteral":
		out = re.ReplaceAllLiteralString(r.Input, r.Replacement)
	case "regexpMatch":
		out = fmt.Sprint(re.MatchString(r.Input))
	case "regexpFind":
		out = re.FindString(r.Input)
	default:
		out = re.ReplaceAllString(r.Input, r.Replacement)
	}
	return response{Output: &out}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var r request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			resp = response{ErrorClass: "request", Error: err.Error()}
		} else if r.Kind == "template" {
			resp = runTemplate(r)
		} else if r.Kind == "pkcs12" {
			resp = runPkcs12(r)
		} else {
			resp = runRegexp(r)
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
