// owner: B
// A kubeconfig with embedded CA and client certificate, as kubectl, helm and @kubernetes/client-node read it.
import { stringify } from 'yaml';

export function kubeconfigYaml(
  server: string,
  caPem: string,
  user: { name: string; certPem: string; keyPem: string },
): string {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'vaultgate-test', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [
      { name: user.name, user: { 'client-certificate-data': b64(user.certPem), 'client-key-data': b64(user.keyPem) } },
    ],
    contexts: [
      { name: 'vaultgate-test', context: { cluster: 'vaultgate-test', user: user.name, namespace: 'default' } },
    ],
    'current-context': 'vaultgate-test',
  });
}
