// Public surface of the controller runtime, for reconcilers and the `controller` command.
export * from './resources.ts';
export * from './objects.ts';
export * from './errors.ts';
export * from './kube-client.ts';
export { HttpKubeClient } from './http-kube-client.ts';
export { Cache, NAMESPACE_INDEX, type Store, type IndexFn } from './cache.ts';
export * from './reconciler.ts';
export * from './reconcile-error.ts';
export {
  ControllerBuilder,
  generationChanged,
  type MapFn,
  type IndexMapping,
  type Predicate,
  type SourceOptions,
} from './builder.ts';
export { Manager, type ManagerOptions, type ManagerStatus, type LeaderState, type LeaderTask } from './manager.ts';
export {
  Informer,
  type ObjectEvent,
  type InformerLifecycleEvent,
  type InformerOptions,
  type WatchSelectors,
} from './informer.ts';
export { WorkQueue } from './workqueue.ts';
export { LeaderElector, type LeaderElectionConfig } from './leader.ts';
export { KubeEventRecorder, nullRecorder, type EventRecorder, type EventInput } from './events.ts';
export { RuntimeMetrics } from './metrics.ts';
export { startHealthServer, type HealthServer } from './health.ts';
export { setCondition, getCondition, removeCondition, isReady, timestamp, type ConditionInput } from './conditions.ts';
export { withFinalizer, hasFinalizer, FINALIZER, type FinalizerHandlers } from './finalizer.ts';
export { applyStatus, statusUnchanged } from './status.ts';
export { applyOwned, controllerReference, isManagedByUs, MANAGED_BY_LABEL, MANAGED_BY } from './apply.ts';
export { redactSecrets } from './redact.ts';
export { systemClock, FakeClock, type Clock } from './clock.ts';
export { OwnWrites } from './own-writes.ts';
