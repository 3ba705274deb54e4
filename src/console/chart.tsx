// uPlot in a Preact component: made once per data, resized with its container, destroyed on unmount.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export function Chart({
  options,
  data,
  label,
}: {
  options: Omit<uPlot.Options, 'width' | 'height'> & { height?: number };
  data: uPlot.AlignedData;
  label: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot({ ...options, width: width(), height: options.height ?? 280 }, data, element);
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: options.height ?? 280 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [options, data]);
  return <div class="chart" ref={ref} role="img" aria-label={label} />;
}
