// Process metrics (CPU, memory, heap, handles, GC, event-loop lag) of the controller and the webhook, into
// the registry each process serves on /metrics: prom-client's default metrics, but the event-loop lag from
// event-loop-lag.ts, which samples only while the loop works (prom-client's sampler never stops: a timer
// waking an idle process twice a second, issue #24.5).
import type { Registry } from 'prom-client';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import version from 'prom-client/lib/metrics/version.js';
import gc from 'prom-client/lib/metrics/gc.js';
import { registerEventLoopLag, type EventLoopLag } from './event-loop-lag.ts';

/** prom-client's default metrics (its `metricsList`, in its order) but eventLoopLag, ours. */
export const PROM_CLIENT_METRICS = {
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  // As prom-client: only where node reports active resources (it does from 17).
  ...(typeof process.getActiveResourcesInfo === 'function' ? { processResources } : {}),
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
  gc,
};

/** Call once per registry: prom-client refuses a second registration of the same names. */
export function collectProcessMetrics(registry: Registry, prefix = ''): EventLoopLag {
  for (const register of Object.values(PROM_CLIENT_METRICS)) register(registry, { prefix });
  return registerEventLoopLag(registry, prefix);
}
