/**
 * Next.js instrumentation hook: runs once when the server starts. The start-up
 * checks live in lib/startup.ts, loaded only on the Node.js runtime.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { validateConfigurationAtStart } = await import('@/lib/startup');
  validateConfigurationAtStart();
}
