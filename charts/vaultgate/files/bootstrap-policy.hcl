# The Vault policy the vaultgate controller itself needs, and nothing more.
# Replace "vaultgate" with your namePrefix and "kubernetes" with vault.auth.mountPath if you changed them
# (`helm install` prints this policy with your values substituted).
#
# The controller writes the ACL policies that VaultPolicy objects describe, named <prefix>.<namespace>.<name>:
path "sys/policies/acl/vaultgate.*" {
  capabilities = ["create", "read", "update", "delete"]
}

# ... and the kubernetes-auth roles that VaultRoleBinding objects describe, with the same names:
path "auth/kubernetes/role/vaultgate.*" {
  capabilities = ["create", "read", "update", "delete"]
}

# Nothing else: no secret engine, no sys/* beyond its own policies, no other auth method. ExternalSecrets
# are read with the identity of their SecretStore (the tenant's role), never with this one. Renewing and
# looking up its own token are covered by Vault's built-in "default" policy.
