// Wrapper that WOULD build `bao` (OpenBao v2.6.2); kept as the record of the attempt, not built.
// v2.6.2's module path has no /v2 suffix, so its v2 tags are invalid versions and the v2.6.2 commit can
// only be required by pseudo-version. The Go module proxy refused it (403 "This module version is not
// available", 2026-11-29); no other version was tried. If it is ever served: add requires for
// github.com/openbao/openbao/api/v2 and sdk/v2 at the versions matching v2.6.2 (its own replaces to ./api
// and ./sdk do not apply to a dependency), run `go mod tidy`, then build ./cmd/bao.
module vaultgate.test/upstream/openbao

go 1.25.8

require github.com/openbao/openbao v0.0.0-20260818154305-dd9c19c37a87
