/**
 * Next.js instrumentation hook: runs once when the server starts. The start-up
 * checks live in lib/startup.ts, loaded only on the Node.js runtime.
 * Traces are exported only when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise
 * no OpenTelemetry module is loaded at all (lib/telemetry.ts).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { validateConfigurationAtStart } = await import('@/lib/startup');
  validateConfigurationAtStart();
  // Not awaited: the server answers at once, and a first request waits only for what it needs and is not ready yet.
  // A preload that fails, even to load, is only a head start lost: never an unhandled rejection, which would
  // stop the process or print a stack trace.
  void import('@/lib/preload')
    .then(({ preloadAtStart }) => preloadAtStart())
    .catch(() => undefined);
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { registerOTel } = await import('@vercel/otel');
    // The exporter follows the standard OTEL_EXPORTER_OTLP_* variables (http/protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL says otherwise).
    registerOTel({ serviceName: process.env.OTEL_SERVICE_NAME ?? 'checkout-payment-service' });
  }
}
