import { configureShipping } from '@/stand-ins/woocommerce/shipping-zones';
import type { Providers } from './providers';

/** The shop of the real store this was checked against: Canada flat 10 or free from 50, Australia served by nothing, elsewhere 15. */
export function expressShop(p: Providers): void {
  p.reset({ taxRates: { CA: 13 }, taxBasedOn: 'shipping' });
  configureShipping(p.woo, {
    zones: [
      {
        name: 'Canada',
        locations: [{ type: 'country', code: 'CA' }],
        methods: [
          { type: 'flat_rate', instanceId: 1, cost: '10.00', classCosts: { bulky: '5.00' } },
          { type: 'free_shipping', instanceId: 3, minAmount: '50.00' },
        ],
      },
      { name: 'Australia (no method)', locations: [{ type: 'country', code: 'AU' }], methods: [] },
    ],
    restOfWorld: [{ type: 'flat_rate', instanceId: 2, cost: '15.00' }],
    productClasses: { 777: 'bulky' },
  });
}
