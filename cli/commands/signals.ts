// Waiting for the signal that ends a long-running command (SIGTERM from the kubelet, SIGINT from a
// terminal). Its own module so that a command importing it loads nothing else (the controller does not
// load the webhook's HTTP stack for it).
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}
