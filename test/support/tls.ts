// A CA-signed serving certificate for 127.0.0.1/localhost, for tests that need HTTPS (certs/generate.ts).
import { generateCA, issueServingCert } from '../../certs/generate.ts';

export interface TestTls {
  cert: string;
  key: string;
  ca: string;
}

export async function selfSignedTls(commonName = 'localhost'): Promise<TestTls> {
  const ca = await generateCA({ commonName: `${commonName}-ca`, validityDays: 2 });
  const leaf = await issueServingCert({
    ca,
    dnsNames: [commonName, 'localhost'],
    ipAddresses: ['127.0.0.1'],
    validityDays: 1,
  });
  return { cert: leaf.cert, key: leaf.key, ca: ca.cert };
}
