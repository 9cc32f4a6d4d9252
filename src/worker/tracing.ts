import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { activeTracing } from '../infra/tracing';

/**
 * Temporal's OpenTelemetry interceptors, installed only while tracing runs (infra/tracing.ts): the client one on
 * the dispatcher's starts (the workflow's headers carry the hand-off's context), the workflow ones inside the
 * bundle (a span for the workflow run and for each attempt it schedules, passed on in the activity's headers) and
 * the activity one (each attempt's span, under which its POST and queries land). Workflow spans leave the sandbox
 * through the `exporter` sink, into the process's span processor.
 */

/** The workflow interceptor module: bundled with the workflows (worker/worker.ts, scripts/bundle-workflows.ts). */
export const WORKFLOW_TRACING_MODULE =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** Worker options adding the interceptors and the workflow span sink; empty when tracing is off. */
export function tracedWorkerOptions(workflowsBundled: boolean): Partial<WorkerOptions> {
  const tracing = activeTracing();
  if (!tracing) return {};
  return {
    interceptors: {
      // A prebuilt bundle carries its workflow interceptors already (the traced bundle).
      ...(workflowsBundled ? {} : { workflowModules: [WORKFLOW_TRACING_MODULE] }),
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/** Client interceptors that put the active context into the headers of each workflow it starts; none when off. */
export function tracedClientInterceptors(): { workflow: WorkflowClientInterceptor[] } | undefined {
  return activeTracing() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}
