<?php
// Build time: Debian's PHP autoloaders (pkg-php-tools) probe optional packages on every request,
// `if (stream_resolve_include_path('/usr/share/php/Aws/SdkPhp/autoload.php')) { include_once ...; }`,
// about 40 file lookups per request for packages this image does not have. The image never
// changes after the build, so each probe is resolved here once: kept as a plain include_once
// when the file exists, dropped when it does not. Composer's autoloader (the article's Laravel)
// makes no such probes. On a FUSE storage driver each probe cost a round trip to the FUSE
// daemon: 1.2 ms of CPU per /api/db request outside the container.
// Usage: php resolve-optional.php FILE...   (rewrites each FILE, prints what it resolved)
$re = "/if \\(stream_resolve_include_path\\('([^']+)'\\)\\) \\{ include_once '\\1'; \\}/";
foreach (array_slice($argv, 1) as $file) {
    $src = file_get_contents($file);
    $kept = $dropped = 0;
    $out = preg_replace_callback($re, function ($m) use (&$kept, &$dropped) {
        if (is_file($m[1])) {
            $kept++;
            return "include_once '" . $m[1] . "';";
        }
        $dropped++;
        return "/* absent at image build: " . $m[1] . " */";
    }, $src);
    if ($out === null) {
        fwrite(STDERR, "resolve-optional: regex failed on $file\n");
        exit(1);
    }
    file_put_contents($file, $out);
    echo "$file: $kept kept, $dropped dropped\n";
}
