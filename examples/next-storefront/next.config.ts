import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // The WooCommerce REST client signs requests with Node's crypto: keep it a plain server module.
  serverExternalPackages: ['@woocommerce/woocommerce-rest-api'],
  // This app is its own root, though it sits inside the service's repository (whose lockfile Next would otherwise pick).
  turbopack: { root: import.meta.dirname },
};

export default nextConfig;
