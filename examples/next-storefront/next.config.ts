import { join } from 'node:path';
import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // The WooCommerce REST client signs requests with Node's crypto: keep it a plain server module.
  serverExternalPackages: ['@woocommerce/woocommerce-rest-api'],
  // The checkout client is installed from ../../client (a link): the build may read files up there.
  turbopack: { root: join(import.meta.dirname, '..', '..') },
};

export default nextConfig;
