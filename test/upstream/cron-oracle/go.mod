module vaultgate.local/cron-oracle

go 1.24

// The cron library ESO evaluates ExternalSecret syncWindows with (its go.mod, v2.7+).
require github.com/robfig/cron/v3 v3.0.1
