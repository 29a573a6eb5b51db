package org.ingestbench.opensearch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.opensearch.Build;
import org.opensearch.Version;
import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.monitor.jvm.JvmInfo;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node from OpenSearch's Maven Central modules, started the way bin/opensearch starts one, minus the
 * bootstrap (no security manager, no jar-hell check, no bootstrap checks: a single node on a private address). The
 * command line is bin/opensearch's: {@code --version} prints "Version: x.y.z, Build: ..., JVM: ..." as
 * org.opensearch.bootstrap.OpenSearch does; {@code -Ename=value} sets a setting. The config directory is
 * {@code $OPENSEARCH_PATH_CONF} (opensearch.yml, log4j2.properties) and path.home the system property
 * {@code opensearch.path.home} (bin/opensearch of this build sets both).
 *
 * <p>The modules are classpath plugins of a Node subclass (Node's protected constructor), as OpenSearch's own test
 * framework (MockNode) starts nodes: Netty4Plugin (modules/transport-netty4), CommonAnalysisPlugin
 * (modules/analysis-common) and PainlessPlugin (modules/lang-painless).
 */
public final class Launcher {
  private static final List<Class<? extends Plugin>> MODULES =
      List.of(Netty4Plugin.class, CommonAnalysisPlugin.class, PainlessPlugin.class);

  /** Node with the modules above as classpath plugins; validateNodeBeforeAcceptingRequests runs no check. */
  static final class ModulesNode extends Node {
    ModulesNode(Environment environment) {
      super(environment, MODULES, true);
    }
  }

  public static void main(String[] args) throws Exception {
    Settings.Builder cli = Settings.builder();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--version") || a.equals("-V")) {
        System.out.println(
            "Version: " + Build.CURRENT.getQualifiedVersion() + ", Build: " + Build.CURRENT.type().displayName()
                + "/" + Build.CURRENT.hash() + "/" + Build.CURRENT.date() + ", JVM: "
                + JvmInfo.jvmInfo().version());
        return;
      }
      String setting;
      if (a.equals("-E") && i + 1 < args.length) setting = args[++i];
      else if (a.startsWith("-E")) setting = a.substring(2);
      else {
        System.err.println("opensearch-launcher: unknown argument \"" + a + "\" (takes --version and -Ename=value)");
        System.exit(64);
        return;
      }
      int eq = setting.indexOf('=');
      if (eq <= 0) {
        System.err.println("opensearch-launcher: -E" + setting + " is not name=value");
        System.exit(64);
        return;
      }
      cli.put(setting.substring(0, eq), setting.substring(eq + 1));
    }
    String home = System.getProperty("opensearch.path.home");
    String conf = System.getenv("OPENSEARCH_PATH_CONF");
    if (home == null || conf == null) {
      System.err.println("opensearch-launcher: needs -Dopensearch.path.home and $OPENSEARCH_PATH_CONF (bin/opensearch sets them)");
      System.exit(78);
      return;
    }
    cli.put("path.home", home);
    Path confDir = Paths.get(conf).toAbsolutePath();
    LogConfigurator.registerErrorListener();
    Environment env =
        InternalSettingsPreparer.prepareEnvironment(cli.build(), Map.of(), confDir, () -> System.getenv("HOSTNAME"));
    LogConfigurator.setNodeName(Node.NODE_NAME_SETTING.get(env.settings()));
    if (Files.exists(confDir.resolve("log4j2.properties"))) LogConfigurator.configure(env);
    else LogConfigurator.configureWithoutConfig(env.settings());

    Node node = new ModulesNode(env);
    CountDownLatch closed = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.close();
        node.awaitClose(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        e.printStackTrace();
      } finally {
        closed.countDown();
      }
    }, "opensearch-launcher-shutdown"));
    node.start();
    closed.await();
  }

  private Launcher() {}
}
