# A Scrapy spider walking follower lists page after page, as the crawler's
# tasks do: the peer workload 20 compares the crawler's concurrency control
# with (bench/scrapy.go). Arguments: key, number of lists, seconds each
# crawl runs, then one or more pairs of base URL (with /api) and
# "defaults" or "autothrottle". The crawls run one after the other in one
# process (an interpreter and Scrapy's imports cost a CPU-second or two
# each time). It prints, as JSON on its last line, Scrapy's version and
# each crawl's pages and 429s; it exits 3 when Scrapy is not installed.
import json
import sys

try:
    import scrapy
    from scrapy.crawler import CrawlerProcess
except ImportError as e:
    print("scrapy unavailable: %s" % e, file=sys.stderr)
    sys.exit(3)
from twisted.internet import defer, reactor

key, lists, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = list(zip(sys.argv[4::2], sys.argv[5::2]))


def sec_uid(i):
    import base64

    handle = "scrapy%04d_f1000000_g0" % i
    return "MS4wLjABAAAA" + base64.urlsafe_b64encode(handle.encode()).decode().rstrip("=")


def lists_spider(base, mode, counts):
    class Lists(scrapy.Spider):
        name = "lists"
        handle_httpstatus_list = [429, 500, 502, 503, 504]
        custom_settings = {"AUTOTHROTTLE_ENABLED": mode == "autothrottle"}

        def page(self, uid, cursor):
            url = base + "/shortvideo/user/followers?secUid=" + uid
            if cursor:
                url += "&cursor=" + cursor
            return scrapy.Request(url, headers={"x-api-key": key}, cb_kwargs={"uid": uid, "cursor": cursor}, dont_filter=True)

        def start_requests(self):
            for i in range(lists):
                yield self.page(sec_uid(i), "")

        def parse(self, response, uid, cursor):
            if response.status == 429:
                counts["throttled"] += 1
                yield self.page(uid, cursor)  # the same page again
                return
            if response.status >= 500:
                counts["errors"] += 1
                yield self.page(uid, cursor)
                return
            counts["pages"] += 1
            body = json.loads(response.text)
            nxt = body.get("cursor")
            if body.get("hasMore") and nxt not in (None, ""):
                yield self.page(uid, str(nxt))

    return Lists


settings = {"LOG_LEVEL": "ERROR", "CLOSESPIDER_TIMEOUT": seconds, "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False}
process = CrawlerProcess(settings)
results, failed = [], []


@defer.inlineCallbacks
def crawl_all():
    try:
        for base, mode in runs:
            counts = {"pages": 0, "throttled": 0, "errors": 0}
            yield process.crawl(lists_spider(base, mode, counts))
            results.append(counts)
    except Exception as e:  # reported once the reactor has stopped
        failed.append(e)
    finally:
        reactor.callLater(0, reactor.stop)


crawl_all()
process.start(stop_after_crawl=False)
if failed:
    raise failed[0]
print(json.dumps({"version": scrapy.__version__, "runs": results}))
