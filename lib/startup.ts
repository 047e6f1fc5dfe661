/** Validates the configuration at server start: production refuses to start rather than fail its first checkout. */
import { getConfig, placeholderMessage } from '@/lib/config';
import { ConfigError } from '@/lib/errors';
import { log } from '@/lib/log';

export function validateConfigurationAtStart(): void {
  try {
    const config = getConfig();
    for (const warning of config.warnings) log.warn('config.warning', { message: warning });
    if (config.placeholders.length > 0) {
      log.warn('config.placeholders', {
        message: `${placeholderMessage(config.placeholders)}; requests that need them will fail until they hold your shop's values`,
      });
    }
    if (config.missing.length > 0) {
      log.warn('config.incomplete', {
        message: `not set: ${config.missing.join(', ')}; requests that need them will fail until they are set`,
      });
    }
    log.info('service.started', {
      env: config.env,
      allowedOrigins: config.allowedOrigins.length,
      sharedState: config.redisUrl ? 'redis' : 'memory',
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.error('config.invalid', { message: error.message });
    if (process.env.NODE_ENV === 'production') process.exit(1);
  }
}
