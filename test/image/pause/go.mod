module vaultgate.test/pause

go 1.24
