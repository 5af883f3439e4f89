import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.Set;

/** Creates a module layer at run time with the named module in args[0] and runs its work. */
public class LayerHost {
    public static void main(String[] args) throws Exception {
        ModuleLayer boot = ModuleLayer.boot();
        Configuration cf = boot.configuration()
                .resolve(ModuleFinder.of(Path.of(args[0])), ModuleFinder.of(), Set.of("app.work"));
        ModuleLayer layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getSystemClassLoader());
        Class<?> worker = layer.findLoader("app.work").loadClass("app.work.Worker");
        System.out.println(worker.getModule().getName() + " " + worker.getMethod("run").invoke(null));
    }
}
